// What this process runs on: whether (and for which CPU) Functions are compiled to machine
// code, and which instruction-set level the eager kernels use.
#pragma once

#include <string>
#include <string_view>

namespace ag {

// True when a JIT backend is linked and registered (the CMake target agc::agc or agc::jit).
// Without one, Functions run on the graph interpreter (see FunctionOptions::jit_compile).
bool jit_available();

// The CPU the JIT generates code for: the host's ("znver2"), or the one AG_JIT_CPU names
// ("x86-64-v3"). Empty when no JIT is linked.
std::string jit_target_cpu();

// The instruction-set level of the eager kernels (elementwise math, reductions, GEMM; also the
// GEMM that compiled code calls): "x86-64-v2", "x86-64-v3", "x86-64-v4" or "native" — the
// widest this CPU supports, or the one AG_KERNEL_ISA names.
std::string_view kernel_isa();

// The threads large eager kernels and compiled loops run on (one shared pool, the caller
// included): AG_NUM_THREADS, else the CPUs this process may use. 1 runs everything on the
// calling thread. Results do not depend on it (docs/jit.md, "Threads"). set_num_threads takes
// effect at the next parallel loop; ValueError outside 1..1024.
void set_num_threads(int n);
int get_num_threads();

}  // namespace ag
