// Machine code stored with a saved model (SaveOptions::compiled_for): the JIT, when linked,
// registers these hooks (jit/src/backend.cpp), and saved_model's save and load call them; the
// runtime itself never generates or links code. The same seam as CompilerBackend, kept out of
// the public headers.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ag/backend.h"

namespace ag::detail {

// The x86-64 levels code is compiled for ahead of time (SaveOptions::compiled_for, ag-aot), widest
// first: x86-64-v4 (AVX-512), x86-64-v3 (AVX2, FMA), x86-64-v2 (SSE4.2).
inline constexpr std::string_view kCpuLevels[] = {"x86-64-v4", "x86-64-v3", "x86-64-v2"};
inline bool is_cpu_level(std::string_view name) {
  for (std::string_view level : kCpuLevels)
    if (name == level) return true;
  return false;
}

struct ObjectCodeHooks {
  // A relocatable object of `graph` (optimized, verified) for the CPU level `cpu`, which the
  // load hook links. ag::Error for a level it does not know.
  std::string (*compile)(std::shared_ptr<const Graph> graph, const std::string& cpu, const std::string& name);
  // Whether this process's CPU runs code of the level `cpu`.
  bool (*can_run)(const std::string& cpu);
  // An executable running `object` (which compile made for `graph`); InternalError when it does
  // not link.
  std::unique_ptr<Executable> (*load)(std::shared_ptr<const Graph> graph, std::string_view object, const std::string& name);
};

// Registered by the JIT when its library is loaded; null without it.
void set_object_code_hooks(const ObjectCodeHooks* hooks);
const ObjectCodeHooks* object_code_hooks();

}  // namespace ag::detail
