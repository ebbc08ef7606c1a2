// The registry of the compiler backend (backend.h): the JIT registers itself when its library
// is linked; without one, Functions run on the interpreter. And the JIT's hooks for the machine
// code of saved models (ag/detail/object_code.h).
#include <atomic>

#include "ag/backend.h"
#include "ag/detail/object_code.h"
#include "ag/platform.h"

namespace ag {
namespace {
std::atomic<CompilerBackend*> g_backend{nullptr};
std::atomic<const detail::ObjectCodeHooks*> g_object_code{nullptr};
}  // namespace

void detail::set_object_code_hooks(const ObjectCodeHooks* hooks) { g_object_code.store(hooks, std::memory_order_release); }
const detail::ObjectCodeHooks* detail::object_code_hooks() { return g_object_code.load(std::memory_order_acquire); }

void set_compiler_backend(CompilerBackend* backend) { g_backend.store(backend, std::memory_order_release); }
CompilerBackend* compiler_backend() { return g_backend.load(std::memory_order_acquire); }
bool jit_available() { return compiler_backend() != nullptr; }
std::string jit_target_cpu() {
  CompilerBackend* b = compiler_backend();
  return b ? b->target_cpu() : std::string();
}

}  // namespace ag
