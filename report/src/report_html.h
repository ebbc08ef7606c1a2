// Renders a FunctionReport as one self-contained HTML page (no network: inline CSS, SVG and a
// few lines of script).
#pragma once

#include <string>

#include "report_data.h"

namespace ag::detail::report {

struct RenderOptions {
  std::string dot;  // the Graphviz executable; "" draws no SVG (the node table and text remain)
};

std::string render_html(const FunctionReport& r, const RenderOptions& options);
// The number of nodes of `g` and its sub-graphs: what the page draws and lists.
size_t count_graph_nodes(const Graph& g);

}  // namespace ag::detail::report
