// Reading graph text back: the inverse of graph_to_text (printer.h). ag-opt reads its input
// with it, and tests write graphs by hand in the printer's form:
//   graph f(%0: f32[4]) -> (f32[4]) {
//     %1 = Const() {value=2} : f32[]
//     %2 = Mul(%0, %1) : f32[4]          # f.cpp:3
//     return %2
//   }
// Lines starting with `//` are comments. Value ids are names: they need not be consecutive, but
// a value is used only after the line that defines it. Every node's type is checked against its
// op's type rule (the verifier's checks), so a graph read back is one the passes and backends
// accept. Constants must be written in full: graph_to_text(g, ConstantText::Full) prints them so
// (the default text elides large ones with "...", which cannot be read back).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ag/graph/graph.h"

namespace ag {

// The state a `var=`/`state=` attribute names ("variable 'w' (float32[2])"), given its text,
// dtype and shape; one call per distinct text in a parse. Without one, the parser makes a fresh
// state per distinct text, holding zeros.
using GraphTextVariables =
    std::function<std::shared_ptr<detail::VariableState>(const std::string& text, DType dtype, const Shape& shape)>;

// Every `graph` in `text`, in order. Malformed text raises ag::ValueError naming the line and
// column ("graph text:4:17: ..."); a well-formed graph whose types break its ops' rules raises
// ag::ValueError with the verifier's message.
std::vector<Graph> graphs_from_text(std::string_view text, const GraphTextVariables& variables = {});
// The one graph in `text` (ValueError if there is none or more than one).
Graph graph_from_text(std::string_view text, const GraphTextVariables& variables = {});

}  // namespace ag
