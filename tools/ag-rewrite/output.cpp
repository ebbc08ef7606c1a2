// Atomic output files, diffs and depfiles for ag-rewrite.
#include "output.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <llvm/Support/Process.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <vector>

namespace ag::tool {
namespace {

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

unsigned lineOf(const std::string& text, size_t offset) {
  return 1 + static_cast<unsigned>(std::count(text.begin(), text.begin() + static_cast<long>(offset), '\n'));
}

std::string escapeMake(const std::string& path) {
  std::string out;
  for (char c : path) {
    if (c == ' ' || c == '#') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

}  // namespace

std::string writeAtomically(const std::string& path, const std::string& text) {
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (!dir.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(dir)) return "cannot create " + dir.str().str() + ": " + ec.message();
  const std::string temp = path + ".tmp" + std::to_string(llvm::sys::Process::getProcessId());
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec);
    if (ec) return "cannot write " + temp + ": " + ec.message();
    os << text;
    os.close();
    if (os.has_error()) {
      llvm::sys::fs::remove(temp);
      return "cannot write " + temp + ": " + os.error().message();
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temp, path)) {
    llvm::sys::fs::remove(temp);
    return "cannot rename " + temp + " to " + path + ": " + ec.message();
  }
  return {};
}

std::string unifiedDiff(const rewriter::FileResult& result) {
  if (result.rewritten == result.original) return {};
  std::string out = "--- " + result.path + "\n+++ " + result.path + " (rewritten)\n";
  const std::string& orig = result.original;
  // The rewritten file may start with a #line directive: a hunk of its own.
  long shift = 0;
  if (result.rewritten.compare(0, 5, "#line") == 0 && orig.compare(0, 5, "#line") != 0) {
    const std::string first = result.rewritten.substr(0, result.rewritten.find('\n'));
    out += "@@ -0,0 +1 @@\n+" + first + "\n";
    shift = 1;
  }
  for (const rewriter::Edit& e : result.edits) {
    const size_t line_begin = orig.rfind('\n', e.begin == 0 ? 0 : e.begin - 1) == std::string::npos || e.begin == 0
                                  ? 0
                                  : orig.rfind('\n', e.begin - 1) + 1;
    size_t line_end = orig.find('\n', e.end);
    line_end = line_end == std::string::npos ? orig.size() : line_end;
    const std::vector<std::string> old_lines = splitLines(orig.substr(line_begin, line_end - line_begin));
    const std::vector<std::string> new_lines =
        splitLines(orig.substr(line_begin, e.begin - line_begin) + e.replacement + orig.substr(e.end, line_end - e.end));
    const unsigned old_start = lineOf(orig, line_begin);
    out += "@@ -" + std::to_string(old_start) + "," + std::to_string(old_lines.size()) + " +" +
           std::to_string(static_cast<long>(old_start) + shift) + "," + std::to_string(new_lines.size()) + " @@\n";
    for (const std::string& l : old_lines) out += "-" + l + "\n";
    for (const std::string& l : new_lines) out += "+" + l + "\n";
    shift += static_cast<long>(new_lines.size()) - static_cast<long>(old_lines.size());
  }
  return out;
}

namespace {

std::string cStringLiteral(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string absolutePath(const std::string& path) {
  llvm::SmallString<256> p(path);
  llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return std::string(p);
}

}  // namespace

std::string withSourceRegistration(const rewriter::FileResult& result, const std::string& output_path) {
  if (result.edits.empty()) return result.rewritten;
  std::string out = result.rewritten;
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out + "static const bool ag__source_file = ::ag::detail::register_source_file(" +
         cStringLiteral(absolutePath(result.path)) + ", " + cStringLiteral(absolutePath(output_path)) + ");\n";
}

std::string depfile(const std::string& target, const rewriter::FileResult& result) {
  std::string out = escapeMake(target) + ":";
  for (const std::string& dep : result.dependencies) out += " \\\n  " + escapeMake(dep);
  return out + "\n";
}

}  // namespace ag::tool
