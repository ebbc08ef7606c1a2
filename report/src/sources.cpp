// Finding and reading the sources a report shows (with the rewritten copies the runtime's
// registry holds: ag/detail/source_registry.h).
#include "sources.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ag/detail/source_registry.h"

namespace ag::detail {
namespace {

// A source larger than this is left out of the page (it would dwarf everything else).
constexpr uintmax_t kMaxSourceBytes = 2 << 20;

std::string read_small_file(const std::string& path) {
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size > kMaxSourceBytes) return {};
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

}  // namespace

namespace report {
namespace {

// The file a node location names: the path itself when it exists (std::source_location paths,
// which #line makes the original's), else a registered original with that base name (the
// rewriter's AG_SOURCE_LOC names only the base name).
std::pair<std::string, std::string> resolve(const std::string& loc_file) {
  const std::map<std::string, std::string> copies = registered_source_files();
  std::error_code ec;
  if (std::filesystem::is_regular_file(loc_file, ec)) {
    const std::string abs = std::filesystem::absolute(loc_file, ec).lexically_normal().string();
    for (const auto& [original, rewritten] : copies)
      if (original == loc_file || original == abs) return {original, rewritten};
    return {abs, {}};
  }
  // A relative path that does not exist from here (ccache's base_dir makes __FILE__ relative to
  // the build directory): a registered original that ends with it, leading "../" and "./" dropped.
  std::string_view rest(loc_file);
  while (rest.starts_with("../") || rest.starts_with("./")) rest.remove_prefix(rest.starts_with("./") ? 2 : 3);
  if (rest.find('/') != std::string_view::npos) {
    for (const auto& [original, rewritten] : copies)
      if (original.size() > rest.size() && original.ends_with(rest) && original[original.size() - rest.size() - 1] == '/')
        return {original, rewritten};
    return {};
  }
  // A base name (the rewriter's AG_SOURCE_LOC): a registered original of that name.
  const std::string base = std::filesystem::path(loc_file).filename().string();
  for (const auto& [original, rewritten] : copies)
    if (std::filesystem::path(original).filename() == base) return {original, rewritten};
  return {};
}

void collect_locs(const Graph& g, std::vector<const char*>& out) {
  for (const Node& n : g.nodes) {
    if (n.loc.file) out.push_back(n.loc.file);
    for (const auto& sub : n.subgraphs) collect_locs(*sub, out);
  }
}

}  // namespace

void SourceSet::add_files_of(const Graph& g) {
  std::vector<const char*> locs;
  collect_locs(g, locs);
  for (const char* loc : locs) {
    if (by_loc_.count(loc)) continue;
    auto [path, rewritten] = resolve(loc);
    int index = -1;
    for (size_t i = 0; i < files_.size() && !path.empty(); ++i)
      if (files_[i].path == path) index = static_cast<int>(i);
    if (index < 0 && !path.empty()) {
      SourceFile f{path, read_small_file(path), rewritten, rewritten.empty() ? std::string() : read_small_file(rewritten)};
      if (!f.text.empty()) {
        index = static_cast<int>(files_.size());
        files_.push_back(std::move(f));
      }
    }
    by_loc_[loc] = index;
  }
}

int SourceSet::index_of(const char* loc_file) const {
  if (!loc_file) return -1;
  const auto it = by_loc_.find(loc_file);
  return it == by_loc_.end() ? -1 : it->second;
}

std::string source_line_id(int index, uint32_t line) { return fmt::format("src{}-L{}", index, line); }

}  // namespace report
}  // namespace ag::detail
