// The registry of the compiler backend (backend.h): the JIT registers itself when its library
// is linked; without one, Functions run on the interpreter.
#include <atomic>

#include "ag/backend.h"
#include "ag/platform.h"

namespace ag {
namespace {
std::atomic<CompilerBackend*> g_backend{nullptr};
}  // namespace

void set_compiler_backend(CompilerBackend* backend) { g_backend.store(backend, std::memory_order_release); }
CompilerBackend* compiler_backend() { return g_backend.load(std::memory_order_acquire); }
bool jit_available() { return compiler_backend() != nullptr; }
std::string jit_target_cpu() {
  CompilerBackend* b = compiler_backend();
  return b ? b->target_cpu() : std::string();
}

}  // namespace ag
