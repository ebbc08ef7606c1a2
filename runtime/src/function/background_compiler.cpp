// The background compile thread: tiered compiles, and the JIT's warm-up. At process exit it
// must not be compiling while the JIT's and LLVM's globals are destroyed: an exit handler,
// registered when the thread starts, drops the queue and waits for the compile in progress (if
// any) to finish; the thread then only ever waits. Its state is never destroyed, so the waiting
// thread touches nothing that exit frees.
#include "background_compiler.h"

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string_view>
#include <thread>

#if defined(__linux__)
#include <sys/resource.h>
#include <unistd.h>
#endif

#include "ag/backend.h"
#include "ag/detail/fork_safety.h"
#include "concrete.h"

namespace ag::detail {
namespace {

struct Compiler {
  std::mutex mu;
  std::condition_variable changed;
  std::deque<std::shared_ptr<ConcreteCore>> queue;
  std::function<void()> gate;
  bool started = false, busy = false, exiting = false;
  bool warm_up_asked = false, warming_up = false;  // the JIT's warm-up: asked once, runs first
  bool forking = false;  // fork() is being prepared: take no new work (fork_safety.h)
};

Compiler*& compiler_ptr() {
  static Compiler* c = new Compiler;  // never destroyed (see above)
  return c;
}
Compiler& compiler() { return *compiler_ptr(); }

void stop_at_exit();

void work() {
  // Below the calls' priority: while it compiles, the calls running on the interpreter (and the
  // pool threads they use) keep the cores. Best effort: an unprivileged thread may lower its own.
#if defined(__linux__)
  setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
#endif
  Compiler& c = compiler();
  std::unique_lock lock(c.mu);
  for (;;) {
    c.changed.wait(lock, [&] { return c.exiting || (!c.forking && (c.warming_up || !c.queue.empty())); });
    if (c.exiting) return;
    if (c.warming_up) {
      c.busy = true;
      lock.unlock();
      if (CompilerBackend* backend = compiler_backend()) {
        try {
          backend->warm_up();
        } catch (...) {  // best effort: the first compile reports what is wrong
        }
      }
      // The warm-up created LLVM's statics (the engine, the libraries it opened, ...) after the
      // handler below was registered, so exit would destroy them before that handler waits for
      // a compile in progress: registered again, it runs first.
      std::atexit(stop_at_exit);
      lock.lock();
      c.busy = c.warming_up = false;
      c.changed.notify_all();
      continue;
    }
    std::shared_ptr<ConcreteCore> fn = std::move(c.queue.front());
    c.queue.pop_front();
    c.busy = true;
    std::function<void()> gate = c.gate;
    lock.unlock();
    if (gate) gate();
    fn->compile_in_background();
    fn.reset();  // an evicted concrete function is freed here, with its code
    lock.lock();
    c.busy = false;
    c.changed.notify_all();
  }
}

void stop_at_exit() {
  Compiler& c = compiler();
  std::deque<std::shared_ptr<ConcreteCore>> dropped;
  std::unique_lock lock(c.mu);
  c.exiting = true;
  dropped.swap(c.queue);
  c.changed.notify_all();
  c.changed.wait(lock, [&] { return !c.busy; });
}

// fork(): the compile in progress finishes first (a compile cut off inside LLVM would leave
// its locks taken in the child) and no new one starts until the fork returns; later, after the
// fork gate, the queue's lock is taken so the child copies a whole queue. The child, which has
// no compile thread, gets a fresh state with that queue and, once the rest of the child's state
// is renewed, a thread of its own for it.
void finish_compile_before_fork() {
  Compiler& c = compiler();
  std::unique_lock lock(c.mu);
  c.forking = true;
  c.changed.wait(lock, [&] { return !c.busy; });
}
void resume_after_fork() {
  Compiler& c = compiler();
  {
    std::lock_guard lock(c.mu);
    c.forking = false;
  }
  c.changed.notify_all();
}
void lock_queue() { compiler().mu.lock(); }
void unlock_queue() { compiler().mu.unlock(); }
void start_once(Compiler& c);
void fresh_compiler_in_child() {
  Compiler& old = compiler();  // its lock stays taken: left behind
  auto* fresh = new Compiler;
  fresh->queue = std::move(old.queue);
  fresh->gate = old.gate;
  fresh->exiting = old.exiting;
  fresh->warm_up_asked = old.warm_up_asked;
  compiler_ptr() = fresh;
}
// The last child hook (after the fork gate was renewed: the new thread's compile takes a pass).
void start_compiler_in_child() {
  Compiler& c = compiler();
  std::lock_guard lock(c.mu);
  if (!c.queue.empty() && !c.exiting) start_once(c);
}

// Under c.mu.
void start_once(Compiler& c) {
  if (c.started) return;
  c.started = true;
  std::atexit(stop_at_exit);
  // Once per process (a child that starts its own thread inherits the registration).
  static const bool hooks =
      (set_fork_hooks(ForkStage::BackgroundCompiler, finish_compile_before_fork, resume_after_fork, start_compiler_in_child),
       set_fork_hooks(ForkStage::CompileQueue, lock_queue, unlock_queue, fresh_compiler_in_child), true);
  (void)hooks;
  std::thread(work).detach();
}

}  // namespace

void enqueue_background_compile(std::shared_ptr<ConcreteCore> fn) {
  Compiler& c = compiler();
  std::lock_guard lock(c.mu);
  if (c.exiting) return;  // calls keep running on the interpreter
  start_once(c);
  c.queue.push_back(std::move(fn));
  c.changed.notify_all();
}

void warm_up_compiler_once() {
  if (const char* e = std::getenv("AG_JIT_WARMUP"); e && std::string_view(e) == "0") return;
  Compiler& c = compiler();
  std::lock_guard lock(c.mu);
  if (c.warm_up_asked || c.exiting || !compiler_backend()) return;
  c.warm_up_asked = c.warming_up = true;
  start_once(c);
  c.changed.notify_all();
}

void wait_for_warm_up() {
  Compiler& c = compiler();
  std::unique_lock lock(c.mu);
  c.changed.wait(lock, [&] { return c.exiting || !c.warming_up; });
}

void wait_for_background_compiles() {
  Compiler& c = compiler();
  std::unique_lock lock(c.mu);
  c.changed.wait(lock, [&] { return c.exiting || (c.queue.empty() && !c.busy); });
}

void set_background_compile_gate(std::function<void()> gate) {
  Compiler& c = compiler();
  std::lock_guard lock(c.mu);
  c.gate = std::move(gate);
}

}  // namespace ag::detail
