// The background compiler of tiered execution (FunctionOptions::tiered): one thread compiling
// queued concrete functions in order, while their calls run on the interpreter. The same thread
// first runs the JIT backend's warm-up (CompilerBackend::warm_up), once per process.
#pragma once

#include <functional>
#include <memory>

namespace ag::detail {

class ConcreteCore;

// Queues `fn` (held until compiled). Starts the thread on first use.
void enqueue_background_compile(std::shared_ptr<ConcreteCore> fn);

// Asks the thread, once per process, to run the registered backend's warm-up before anything
// queued. Called when a Function that may compile is created: its first compile then finds the
// JIT's engine built and LLVM's code paged in (docs/jit.md, "Warm-up").
void warm_up_compiler_once();

// Blocks until the warm-up asked for (if any) has finished. A Function's destructor calls it: the
// warm-up, like a compile, must not run while exit destroys LLVM's statics.
void wait_for_warm_up();

// Blocks until the queue is empty and no compile runs.
void wait_for_background_compiles();

// Tests: called by the compile thread before each compile (may block); null: none.
void set_background_compile_gate(std::function<void()> gate);

}  // namespace ag::detail
