// fork() in a process that uses agc: the child must not wait for threads it does not have (the
// pool's workers, the background compiler) or for locks a thread of the parent held at the
// fork (a trace, a compile inside LLVM, the allocator's pool). Each piece registers what to do
// around fork() here; one pthread_atfork registration runs them in a fixed order
// (docs/reliability.md, "fork()").
#pragma once

namespace ag::detail {

// The order in which prepare hooks run (parent and child hooks run in the reverse order). The
// background compiler quiesces first (its next compile would wait at the gate, holding its
// queue), then the gate waits for traces and compiles in flight, then leaf locks are taken.
enum class ForkStage : int { BackgroundCompiler = 0, Gate = 1, Allocator = 2, ThreadPool = 3, Count = 4 };

// Sets the hooks of `stage` (once per stage; a null hook does nothing). Thread-safe.
void set_fork_hooks(ForkStage stage, void (*prepare)(), void (*parent)(), void (*child)());

// A pass through the fork gate. Held across work that runs LLVM or holds a Function's trace or
// compile locks, and taken before any of those locks: fork() waits until no other thread holds
// one, and a thread that asks for one while a fork is being prepared waits for it to end.
// Reentrant on a thread.
class ForkGatePass {
 public:
  ForkGatePass();
  ~ForkGatePass();
  ForkGatePass(const ForkGatePass&) = delete;
  ForkGatePass& operator=(const ForkGatePass&) = delete;
};

// A pass without waiting, for code that may run under other locks (dropping compiled code):
// false while a fork is being prepared (the caller then skips the work, e.g. leaves the code
// mapped). On true, call leave_fork_gate() when done.
bool try_enter_fork_gate();
void leave_fork_gate();

}  // namespace ag::detail
