// fork() in a process that uses agc: the child must not wait for threads it does not have (the
// pool's workers, the background compiler) or for locks a thread of the parent held at the
// fork (a trace, a compile inside LLVM, the allocator's pool). Each piece registers what to do
// around fork() here; one pthread_atfork registration runs them in a fixed order
// (docs/reliability.md, "fork()").
#pragma once

namespace ag::detail {

// The order in which prepare hooks run (parent and child hooks run in the reverse order). The
// background compiler finishes its compile first (its next one would wait at the gate while
// counted busy), then the gate waits for traces and compiles in flight, then the leaf locks
// are taken: the compile queue's and the allocator's (a thread holding a pass may still need
// them while the gate waits for it).
enum class ForkStage : int {
  BackgroundCompiler = 0,
  Gate = 1,
  CompileQueue = 2,
  Allocator = 3,
  ThreadPool = 4,
  Count = 5
};

// Sets the hooks of `stage` (once per stage, before its first fork; a null hook does nothing).
// Thread-safe, and takes no lock: a stage may call it under its own.
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
