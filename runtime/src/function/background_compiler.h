// The background compiler of tiered execution (FunctionOptions::tiered): one thread compiling
// queued concrete functions in order, while their calls run on the interpreter.
#pragma once

#include <functional>
#include <memory>

namespace ag::detail {

class ConcreteCore;

// Queues `fn` (held until compiled). Starts the thread on first use.
void enqueue_background_compile(std::shared_ptr<ConcreteCore> fn);

// Blocks until the queue is empty and no compile runs.
void wait_for_background_compiles();

// Tests: called by the compile thread before each compile (may block); null: none.
void set_background_compile_gate(std::function<void()> gate);

}  // namespace ag::detail
