// Why a Function call leaves the cached call's fast path (ConcreteCore::run): numeric checks,
// a profile, or AG_CHECK=eager. One word, so the fast path tests all of them with one relaxed load.
#pragma once

#include <atomic>

namespace ag::detail {

enum class CallHook : unsigned { CheckNumerics = 1, Profiling = 2, CheckEager = 4 };

inline constinit std::atomic<unsigned> g_call_hooks{0};
inline bool call_hooks_on() { return g_call_hooks.load(std::memory_order_relaxed) != 0; }
inline bool call_hook_on(CallHook h) { return (g_call_hooks.load(std::memory_order_relaxed) & static_cast<unsigned>(h)) != 0; }
inline void set_call_hook(CallHook h, bool on) {
  if (on) g_call_hooks.fetch_or(static_cast<unsigned>(h));
  else g_call_hooks.fetch_and(~static_cast<unsigned>(h));
}

// AG_CHECK=eager (compare_with_eager on every call): read once, where Functions are made.
void check_eager_env_start();

}  // namespace ag::detail
