// Which graph node each line of the inspection IR and assembly came from (the HTML report).
// An inspection build gives every instruction lowered for top-level node i the debug location
// line i + 1 (line 0: no node) in a file named after the function; LLVM keeps those locations
// through optimization where it can and the assembly printer writes them as .loc directives.
#pragma once

#include <string>

#include "ag/backend.h"

namespace llvm {
class DISubprogram;
class Function;
class Module;
}  // namespace llvm

namespace ag::jit {

// Gives `entry` a subprogram (line tables only) that node locations are scoped to.
llvm::DISubprogram* add_node_line_scope(llvm::Module& m, llvm::Function& entry);
// The module's IR with each instruction's line tagged with its node; the debug info is stripped
// from the module first, so the text reads like Engine::ir's.
Executable::MappedText print_ir_by_node(llvm::Module& m);
// Assembly of a module with node locations: each line tagged with the node of the .loc before
// it, and the debug-info directives and sections removed.
Executable::MappedText map_assembly_by_node(const std::string& assembly);

}  // namespace ag::jit
