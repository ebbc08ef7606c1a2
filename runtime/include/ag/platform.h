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

// Flush denormal floats to zero (the CPU's flush-to-zero and denormals-are-zero modes): a result
// that would be denormal is 0, and a denormal input reads as 0, in eager kernels and compiled
// code alike. Off by default: IEEE arithmetic, the results of plain C++. A program whose values
// decay towards zero (an optimizer's moments of units that stopped learning) otherwise runs
// several times slower once they are denormal; TensorFlow's CPU runtime flushes them, PyTorch
// has torch.set_flush_denormal. Applies to the calling thread and to agc's pool threads (each
// takes it up at its next parallel loop); another thread of yours calls it for itself. Returns
// false, and changes nothing, on a CPU without these modes.
bool set_flush_denormals(bool on);
// Whether the calling thread flushes denormals.
bool flush_denormals();

}  // namespace ag
