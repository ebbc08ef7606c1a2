// The user's source files a report shows: found from the source locations of graph nodes, with
// the rewritten copy that ag-rewrite registered for each (register_source_file).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ag/graph/graph.h"

namespace ag::detail::report {

struct SourceFile {
  std::string path;            // the original, as found on disk
  std::string text;            // its contents
  std::string rewritten_path;  // "" when ag-rewrite registered no copy
  std::string rewritten_text;
};

class SourceSet {
 public:
  // Every file named by a node of `g` (sub-graphs included) that can be read.
  void add_files_of(const Graph& g);
  const std::vector<SourceFile>& files() const { return files_; }
  // The index in files() of the file a node's location names, or -1.
  int index_of(const char* loc_file) const;

 private:
  std::vector<SourceFile> files_;
  std::map<std::string, int> by_loc_;  // a node's loc.file -> index, or -1 when unreadable
};

// "<prefix>-L<line>": the id of a line of source file `index` in the page.
std::string source_line_id(int index, uint32_t line);

}  // namespace ag::detail::report
