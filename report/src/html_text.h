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
// (n from 1) with its number in front. `line_keys` (empty, or one per line) tags a line with
// data-node="<key>" ("": none), and `node_href(key)` links its number to the node's entry.
std::string numbered_lines(std::string_view text, const std::string& id_prefix,
                           const std::vector<std::string>& line_keys = {},
                           const std::function<std::string(const std::string&)>& node_href = nullptr);

}  // namespace ag::detail::report
