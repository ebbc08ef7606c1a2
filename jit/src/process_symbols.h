// Symbols compiled code takes from the process: libm and memcpy/memset through the process's
// own symbol table, libmvec's vector math (_ZGV*) opened at the first lookup of one of its names.
// LLVM: included by engine code only.
#pragma once

#include <llvm/Support/Error.h>

namespace llvm::orc {
class JITDylib;
}  // namespace llvm::orc

namespace ag::jit {

// Adds both generators to `jd` (the engine's agc.runtime); an error if the process's symbol
// table cannot be opened.
llvm::Error add_process_symbols(llvm::orc::JITDylib& jd, char global_prefix);

}  // namespace ag::jit
