#include "ag/detail/saved_model_files.h"

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "ag/error.h"
#include "ag/saved_model.h"

namespace ag::saved_model::detail {
namespace fs = std::filesystem;

std::string checksum(std::string_view bytes) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return fmt::format("{:016x}", h);
}

void write_whole(const fs::path& path, std::string_view bytes, std::string_view who) {
  const fs::path tmp = path.string() + fmt::format(".tmp{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(tmp, ignored);
      throw ValueError(fmt::format("{}: cannot write {}", who, path.string()));
    }
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) throw ValueError(fmt::format("{}: cannot write {}: {}", who, path.string(), ec.message()));
}

std::string read_all(const fs::path& path, std::string_view who) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ValueError(fmt::format("{}: cannot read {}", who, path.string()));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string manifest_text(const Manifest& m) {
  std::string t = fmt::format("{}{}\nwriter {}\n", kMagic, m.version, m.writer);
  for (const Manifest::File& f : m.files) t += fmt::format("file {} {} {}\n", f.path, f.size, f.checksum);
  for (const Manifest::SignatureLine& s : m.signatures) t += fmt::format("signature {} {} {}\n", s.name, s.path, s.text);
  for (const Manifest::VariableLine& v : m.variables) t += fmt::format("variable {}\t{}\n", v.name, v.text);
  for (const Manifest::ObjectLine& o : m.objects) t += fmt::format("object {} {} {}\n", o.signature, o.cpu, o.path);
  return t + fmt::format("end {}\n", checksum(t));
}

namespace {

// The next space-separated word of `rest`, removed from it ("" at the end).
std::string word(std::string_view& rest) {
  const size_t end = rest.find(' ');
  std::string w(rest.substr(0, end));
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  return w;
}

}  // namespace

Manifest parse_manifest(std::string_view text, const std::string& where) {
  auto fail = [&](const std::string& msg) -> void { throw ValueError(fmt::format("ag::saved_model::load: {}: {}", where, msg)); };
  Manifest m;
  if (!text.starts_with(kMagic)) fail("not an agc saved model (its first line is not \"agc saved model <version>\")");
  const size_t first_end = text.find('\n');
  const std::string version(text.substr(std::string_view(kMagic).size(), first_end - std::string_view(kMagic).size()));
  if (version != std::to_string(kFormatVersion)) {
    // The writer line (from format 1 on) says which release to load it with.
    const size_t writer_at = text.find("\nwriter ");
    const std::string writer = writer_at == std::string_view::npos
                                   ? std::string()
                                   : std::string(text.substr(writer_at + 8, text.find('\n', writer_at + 8) - writer_at - 8));
    fail(fmt::format("saved in format version {}{}; this agc ({}) reads version {}", version,
                     writer.empty() ? "" : " by " + writer, AG_VERSION, kFormatVersion));
  }
  m.version = kFormatVersion;
  const size_t end_line = text.rfind("end ");
  if (end_line == std::string_view::npos || (end_line > 0 && text[end_line - 1] != '\n') || !text.ends_with('\n') ||
      text.substr(end_line + 4, text.size() - end_line - 5) != checksum(text.substr(0, end_line)))
    fail("is damaged or was altered (its checksum does not match)");
  std::string_view body = text.substr(first_end + 1, end_line - first_end - 1);
  int line_no = 1;
  while (!body.empty()) {
    ++line_no;
    const size_t nl = body.find('\n');
    std::string_view line = body.substr(0, nl);
    body = nl == std::string_view::npos ? std::string_view() : body.substr(nl + 1);
    const std::string kind = word(line);
    if (kind == "writer") {
      m.writer = std::string(line);
    } else if (kind == "file") {
      Manifest::File f;
      f.path = word(line);
      const std::string size = word(line);
      f.checksum = word(line);
      if (f.path.empty() || size.empty() || size.find_first_not_of("0123456789") != std::string::npos || f.checksum.empty())
        fail(fmt::format("line {}: a file line is 'file <path> <size> <checksum>'", line_no));
      if (f.path.find("..") != std::string::npos || f.path.starts_with('/'))
        fail(fmt::format("names a file outside the model: {}", f.path));
      f.size = std::stoull(size);
      m.files.push_back(f);
    } else if (kind == "signature") {
      Manifest::SignatureLine s;
      s.name = word(line);
      s.path = word(line);
      s.text = std::string(line);
      if (s.name.empty() || s.path.empty()) fail(fmt::format("line {}: a signature line is 'signature <name> <path> <text>'", line_no));
      m.signatures.push_back(s);
    } else if (kind == "variable") {
      const size_t tab = line.find('\t');
      if (tab == std::string_view::npos) fail(fmt::format("line {}: a variable line is 'variable <name>\\t<text>'", line_no));
      m.variables.push_back({std::string(line.substr(0, tab)), std::string(line.substr(tab + 1))});
    } else if (kind == "object") {
      Manifest::ObjectLine o;
      o.signature = word(line);
      o.cpu = word(line);
      o.path = word(line);
      if (o.signature.empty() || o.cpu.empty() || o.path.empty() || !line.empty())
        fail(fmt::format("line {}: an object line is 'object <signature> <cpu level> <path>'", line_no));
      m.objects.push_back(o);
    } else {
      fail(fmt::format("line {}: unknown line '{}'", line_no, kind));
    }
  }
  return m;
}

}  // namespace ag::saved_model::detail
