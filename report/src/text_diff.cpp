// Longest-common-subsequence line diff (graphs are small: a few hundred lines at most).
#include "text_diff.h"

#include <cstdint>

#include "html_text.h"

namespace ag::detail::report {

std::vector<DiffLine> diff_lines(std::string_view before, std::string_view after, size_t max_cells) {
  const std::vector<std::string_view> a = split_lines(before), b = split_lines(after);
  const size_t n = a.size(), m = b.size();
  std::vector<DiffLine> out;
  if (n * m > max_cells) {
    for (auto l : a) out.push_back({'-', std::string(l)});
    for (auto l : b) out.push_back({'+', std::string(l)});
    return out;
  }
  // lcs[i][j]: the LCS length of a[i..] and b[j..].
  std::vector<uint32_t> lcs((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return lcs[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;) at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
  size_t i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] == b[j]) out.push_back({' ', std::string(a[i])}), ++i, ++j;
    else if (at(i + 1, j) >= at(i, j + 1)) out.push_back({'-', std::string(a[i++])});
    else out.push_back({'+', std::string(b[j++])});
  }
  for (; i < n; ++i) out.push_back({'-', std::string(a[i])});
  for (; j < m; ++j) out.push_back({'+', std::string(b[j])});
  return out;
}

}  // namespace ag::detail::report
