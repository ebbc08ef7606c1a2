// Ahead-of-time compilation: a planned concrete function to one relocatable, position-independent
// ELF object for a named x86-64 CPU, to be linked by the system linker into a program that loads
// no LLVM (ag-aot, docs/deploying.md). The header is LLVM-free.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "plan.h"

namespace ag::jit {

// The object's one global symbol is `entry_symbol` (an EntryFn, abi.h); everything else it defines
// is local, so the objects of many functions link into one program. It calls the runtime helpers
// by name (abi.h: agc::jit_core defines them all). `cpu`: "x86-64-v2", "x86-64-v3", "x86-64-v4" or
// a processor LLVM knows; unlike AG_JIT_CPU it need not be this machine's (ag::Error for a name
// LLVM does not know). The module is compiled whole (no second module: module_split.h) at
// program.config.opt_level.
std::string compile_aot_object(const Program& program, const std::string& name, const std::string& cpu,
                               const std::string& entry_symbol);

// A static library (GNU ar, with a symbol table) of (member name, object) pairs.
std::string archive_of(const std::vector<std::pair<std::string, std::string>>& objects);

}  // namespace ag::jit
