// Hazard slots: the membarrier registration and the writer's side (see hazard_slots.h).
#include "hazard_slots.h"

#include <cstdlib>
#include <mutex>
#include <string_view>
#include <thread>

#include "ag/detail/fork_safety.h"

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace ag::detail::hazard {
namespace {

#if defined(AG_HAZARD_TSAN)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif

// AG_HAZARD_FENCES=1: fences on both sides, as where membarrier is not available (the tests of
// that path, and comparisons).
bool fences_asked() {
  const char* e = std::getenv("AG_HAZARD_FENCES");
  return e && std::string_view(e) == "1";
}

// ThreadSanitizer cannot see the ordering membarrier gives, so its builds use fences.
bool register_membarrier() {
#if defined(__linux__) && defined(SYS_membarrier)
  if (kThreadSanitizer || fences_asked()) return false;
  const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
#else
  return false;
#endif
}

}  // namespace

int decide_mode() {
  static std::once_flag once;
  std::call_once(once, [] { g_mode.store(register_membarrier() ? 1 : 0, std::memory_order_seq_cst); });
  return g_mode.load(std::memory_order_seq_cst);
}

void decide_mode_in_background() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (g_mode.load(std::memory_order_acquire) >= 0) return;
    // Detached: it ends within milliseconds, and fork() waits for it at the gate (a child must
    // not inherit a decision half made).
    std::thread([] {
      const ForkGatePass pass;
      decide_mode();
    }).detach();
  });
}

void writer_fence() {
  if (decide_mode() == 1) {
#if defined(__linux__) && defined(SYS_membarrier)
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
#endif
    // Registered but refused now: cannot happen on Linux; a fence alone would be unsound
    // against callers that skip theirs, so fail loudly rather than free something in use.
    std::terminate();
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool held_by_any_thread(const void* p) {
  for (const Slot& s : g_slots)
    if (s.held.load(std::memory_order_acquire) == p) return true;
  return false;
}

}  // namespace ag::detail::hazard
