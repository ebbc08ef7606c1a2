// HTML escaping and numbered code listings for the report.
#include "html_text.h"

#include <fmt/format.h>

namespace ag::detail::report {

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

std::string numbered_lines(std::string_view text, const std::string& id_prefix, const std::vector<int32_t>& line_nodes,
                           const std::function<std::string(int32_t)>& node_href) {
  const std::vector<std::string_view> lines = split_lines(text);
  std::string out = "<pre class=\"code\">";
  for (size_t i = 0; i < lines.size(); ++i) {
    const int32_t node = i < line_nodes.size() ? line_nodes[i] : -1;
    const std::string id = fmt::format("{}-L{}", id_prefix, i + 1);
    if (node >= 0 && node_href)
      out += fmt::format("<span class=\"line mapped\" id=\"{}\" data-node=\"{}\"><a class=\"ln\" href=\"{}\" "
                         "title=\"from node %{}\">{:>5}</a> ",
                         id, node, escape(node_href(node)), node, i + 1);
    else
      out += fmt::format("<span class=\"line\" id=\"{}\"><span class=\"ln\">{:>5}</span> ", id, i + 1);
    out += escape(lines[i]);
    out += "</span>\n";
  }
  return out + "</pre>\n";
}

}  // namespace ag::detail::report
