// Graphs as SVG for the report: Graphviz's `dot` run as a subprocess (when installed), and its
// nodes tagged and linked to the report's node table.
#pragma once

#include <string>

namespace ag::detail::report {

// The path of an executable `dot` on PATH, or "" when there is none.
std::string find_dot();
// Runs `<dot> -Tsvg` on `dot_text` and returns the <svg> element (the XML prolog dropped), or ""
// with `error` set when dot fails.
std::string run_dot(const std::string& dot, const std::string& dot_text, std::string& error);
// Tags the node groups of Graphviz's SVG whose <title> names a graph node (n3, n3s0_n1; not the
// "ret" pseudo-nodes): <g id="<prefix>-<title>" class="node ag-node">, its shapes wrapped in a
// link to "#<prefix>-row-<title>" (the node's row in the report's node table).
std::string link_svg_nodes(const std::string& svg, const std::string& prefix);

}  // namespace ag::detail::report
