// fork() hooks and the fork gate (ag/detail/fork_safety.h).
#include "ag/detail/fork_safety.h"

#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ag::detail {
namespace {

// Each stage's hooks are set once, before their first fork, and read by the handlers: atomics
// and no lock (a lock here would be taken after a stage's own lock by set_fork_hooks and before
// it by the handlers).
using Hook = void (*)();
struct Hooks {
  std::atomic<Hook> prepare{nullptr}, parent{nullptr}, child{nullptr};
};
constexpr int kStages = static_cast<int>(ForkStage::Count);
Hooks g_hooks[kStages];

// The hooks as prepare saw them: parent and child run exactly those (a stage set up during the
// fork would otherwise be unlocked without having been locked). Only the forking thread uses it.
struct Snapshot {
  Hook parent = nullptr, child = nullptr;
};
Snapshot g_forking[kStages];

void run_prepare() {
  for (int s = 0; s < kStages; ++s) {
    const Hooks& h = g_hooks[s];
    const Hook prepare = h.prepare.load(std::memory_order_acquire);
    g_forking[s] = {h.parent.load(std::memory_order_acquire), h.child.load(std::memory_order_acquire)};
    if (prepare) prepare();
  }
}
void run_parent() {
  for (int s = kStages - 1; s >= 0; --s)
    if (g_forking[s].parent) g_forking[s].parent();
}
void run_child() {
  for (int s = kStages - 1; s >= 0; --s)
    if (g_forking[s].child) g_forking[s].child();
}

// ---- the gate ----

struct Gate {
  std::mutex mu;
  std::condition_variable left;  // a pass ended, or the fork did
  std::atomic<bool> forking{false};
  int active = 0;  // threads holding a pass
};
Gate*& gate() {
  static Gate* g = new Gate;  // never destroyed: passes may be taken during static destruction
  return g;
}
thread_local int t_depth = 0;  // this thread's nested passes

// The forking thread's own pass, if it holds one (fork() called by code inside a trace).
int own_passes() { return t_depth > 0 ? 1 : 0; }

void gate_prepare() {
  Gate& g = *gate();
  std::unique_lock lock(g.mu);
  g.forking.store(true, std::memory_order_release);
  g.left.wait(lock, [&] { return g.active == own_passes(); });
  lock.release();  // held across fork(): no pass begins or ends meanwhile
}
void gate_parent() {
  Gate& g = *gate();
  g.forking.store(false, std::memory_order_release);
  g.mu.unlock();
  g.left.notify_all();
}
void gate_child() {
  // The parent's gate stays locked, with waiters that do not exist here: a fresh one replaces it.
  auto* fresh = new Gate;
  fresh->active = own_passes();
  gate() = fresh;
}

void register_gate_once() {
  static const bool registered = (set_fork_hooks(ForkStage::Gate, gate_prepare, gate_parent, gate_child), true);
  (void)registered;
}

}  // namespace

void set_fork_hooks(ForkStage stage, void (*prepare)(), void (*parent)(), void (*child)()) {
  static const bool registered = (pthread_atfork(run_prepare, run_parent, run_child), true);
  (void)registered;
  Hooks& h = g_hooks[static_cast<int>(stage)];
  h.prepare.store(prepare, std::memory_order_release);
  h.parent.store(parent, std::memory_order_release);
  h.child.store(child, std::memory_order_release);
}

ForkGatePass::ForkGatePass() {
  if (t_depth++ > 0) return;
  register_gate_once();
  Gate& g = *gate();
  std::unique_lock lock(g.mu);
  g.left.wait(lock, [&] { return !g.forking.load(std::memory_order_relaxed); });
  ++g.active;
}

ForkGatePass::~ForkGatePass() { leave_fork_gate(); }

bool try_enter_fork_gate() {
  if (t_depth > 0) {
    ++t_depth;
    return true;
  }
  register_gate_once();
  Gate& g = *gate();
  // Never blocks on the gate's lock, which prepare holds through the fork: the caller may hold
  // locks of its own that the child would then find taken.
  for (;;) {
    if (g.forking.load(std::memory_order_acquire)) return false;
    if (g.mu.try_lock()) {
      const bool open = !g.forking.load(std::memory_order_relaxed);
      if (open) {
        ++g.active;
        ++t_depth;
      }
      g.mu.unlock();
      return open;
    }
    std::this_thread::yield();
  }
}

void leave_fork_gate() {
  if (--t_depth > 0) return;
  Gate& g = *gate();
  {
    std::lock_guard lock(g.mu);
    --g.active;
  }
  g.left.notify_all();
}

}  // namespace ag::detail
