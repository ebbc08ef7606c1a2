// The x86-64 levels that code is compiled for ahead of time (ag-aot, SaveOptions::compiled_for):
// x86-64-v2 (SSE4.2), x86-64-v3 (AVX2, FMA), x86-64-v4 (AVX-512). No LLVM.
#pragma once

#include <string>
#include <string_view>

namespace ag::jit {

inline constexpr const char* kCpuLevels[] = {"x86-64-v4", "x86-64-v3", "x86-64-v2"};  // widest first

bool is_cpu_level(std::string_view name);
// Whether this CPU has every feature of `level`: the levels are those the eager kernels are
// built for, whose feature sets the runtime checks (kernel_set.h); a level this build has no
// kernels for counts as not fitting.
bool cpu_level_fits(std::string_view level);

}  // namespace ag::jit
