// The CPU the JIT generates code for: the host's, or the one AG_JIT_CPU names.
#pragma once

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>

#include <string>

namespace ag::jit {

// AG_JIT_CPU unset, empty or "host": the host CPU with its detected features. Otherwise an
// x86-64 CPU name LLVM knows (a level such as "x86-64-v2", "x86-64-v3", "x86-64-v4", or a
// processor such as "haswell" or "znver3"), with exactly that CPU's features: code for a
// narrower CPU than the host, to test or to ship what another machine would run. Throws
// ag::Error for an unknown name, or for a CPU with features this one lacks (its code could
// not run here).
llvm::orc::JITTargetMachineBuilder jit_target_machine();

// Triple, CPU name and features, LLVM version: the target's part of every disk-cache key.
std::string target_id_of(const llvm::orc::JITTargetMachineBuilder& target);
// target_id_of(jit_target_machine()) for AG_JIT_CPU as set now, computed once per value.
const std::string& current_target_id();

// The width in bytes of the widest vector registers of that target: 64 (AVX-512), 32 (AVX2) or
// 16 (SSE), for the kernels agc splits into vectors itself (small matmuls).
int vector_bytes(const llvm::orc::JITTargetMachineBuilder& target);

}  // namespace ag::jit
