// Kernels named by their own IR, so that compiles of other functions and signatures find the
// ones they share (shared_kernels.h; docs/jit.md, "Kernels shared across compiles"). LLVM: included
// by engine code only.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace llvm {
class Module;
}  // namespace llvm

namespace ag::jit {

struct NamedKernel {
  std::string name;  // `<stem>.<hash>`: the function's name, with its content in it
  std::string key;   // the whole hash, with the stem: what the process's shared kernels are keyed by
};

// Whether the functions `part` names (the second part of a split module, module_split.h) could
// be a module of their own: they call functions of the part or declarations, and read constants
// (not a function of `m` outside the part, not a global variable that is not a constant).
bool kernels_self_contained(const llvm::Module& m, const std::vector<std::string>& part);

struct KernelNaming {
  std::vector<NamedKernel> kernels;  // callees before callers
  std::vector<std::pair<std::string, std::string>> renames;  // old name -> new, for the module that calls them
};
// Renames the functions `part` names, self-contained, after their own IR: `<stem>.<hash>`, the
// stem being the old name without the number that gives its place in the module
// (`agc_entry.nest3` -> `agc_entry.nest`), the hash that of `salt` (the target and the
// settings), the stem, and the function as a module of its own would hold it (its callees
// declared, its constants copied, its values unnamed): the same kernel in any module gets the
// same name. Functions of the part that come out identical become one. Every function of the
// part is made external: each is then a symbol of its object. `m` may be the whole module or the
// second part alone (module_split.h); rename_declarations applies the same names to the other.
KernelNaming name_kernels_by_content(llvm::Module& m, const std::vector<std::string>& part, const std::string& salt);
void rename_declarations(llvm::Module& m, const std::vector<std::pair<std::string, std::string>>& renames);

}  // namespace ag::jit
