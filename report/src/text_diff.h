// A line diff of two texts (the graph before and after a pass), for the report.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ag::detail::report {

struct DiffLine {
  char op = ' ';  // ' ' kept, '-' only in the old text, '+' only in the new one
  std::string text;
};

// The shortest edit script by longest common subsequence. Texts whose line counts multiply to
// more than `max_cells` are not compared line by line: every old line is '-', every new one '+'.
std::vector<DiffLine> diff_lines(std::string_view before, std::string_view after, size_t max_cells = 4'000'000);

}  // namespace ag::detail::report
