// HTML building blocks of the report: escaping, and text shown as numbered, anchored lines.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ag::detail::report {

// Escapes & < > " ' for element text and attribute values.
std::string escape(std::string_view s);
// The lines of `text` (a last line without '\n' counts; an empty text has none).
std::vector<std::string_view> split_lines(std::string_view text);

// `text` as a <pre class="code"> of lines, each `<span class="line" id="<id_prefix>-L<n>">`
// (n from 1) with its number in front. `line_nodes` (empty, or one per line) tags lines with
// data-node="<k>" (-1: none), and `node_href(k)` links the line number to the node's entry.
std::string numbered_lines(std::string_view text, const std::string& id_prefix,
                           const std::vector<int32_t>& line_nodes = {},
                           const std::function<std::string(int32_t)>& node_href = nullptr);

}  // namespace ag::detail::report
