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

std::string numbered_lines(std::string_view text, const std::string& id_prefix, const std::vector<std::string>& line_keys,
                           const std::function<std::string(const std::string&)>& node_href) {
  const std::vector<std::string_view> lines = split_lines(text);
  std::string out = "<pre class=\"code\">";
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string* key = i < line_keys.size() && !line_keys[i].empty() ? &line_keys[i] : nullptr;
    const std::string id = fmt::format("{}-L{}", id_prefix, i + 1);
    if (key && node_href)
      out += fmt::format("<span class=\"line mapped\" id=\"{}\" data-node=\"{}\"><a class=\"ln\" href=\"{}\" "
                         "title=\"from node {}\">{:>5}</a> ",
                         id, escape(*key), escape(node_href(*key)), escape(*key), i + 1);
    else
      out += fmt::format("<span class=\"line\" id=\"{}\"><span class=\"ln\">{:>5}</span> ", id, i + 1);
    out += escape(lines[i]);
    out += "</span>";  // each line is a block: a newline here would show as an empty line
  }
  return out + "</pre>\n";
}

}  // namespace ag::detail::report
