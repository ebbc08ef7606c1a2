// Options and statistics of ag::function.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ag/tensor_spec.h"

namespace ag {

// What a Function does when a new trace would exceed FunctionOptions::max_traces.
enum class TracePolicy : uint8_t {
  error,       // throw ag::ValueError naming the function, the cap and the signature
  warn,        // log one warning and keep tracing
  generalize,  // trace with every dim unknown (-1), so one trace serves all shapes of a rank
};

// Declared in this order so designated initializers work:
//   ag::function(f, {.input_signature = {ag::TensorSpec({-1}, ag::int32)}, .jit_compile = false})
struct FunctionOptions {
  // One TensorSpec per ag::Tensor parameter, in order. Empty: trace per call signature.
  std::vector<TensorSpec> input_signature = {};
  // After a retrace that differs only in dims, trace a generalized signature (unknown dims).
  bool reduce_retracing = false;
  // Unset (TensorFlow's jit_compile=None): compile each concrete function with the JIT when
  // one is linked (agc::agc; ag::jit_available()), else run it on the graph interpreter and
  // warn once per process.
  // true: the JIT is required (a call throws ag::Error when none is linked). false: always
  // the interpreter, no warning.
  std::optional<bool> jit_compile = std::nullopt;
  // Used in logs, dumps and signatures. Default: the function's name when known.
  std::string name = {};
  // The parameters' names, one per parameter, in signatures and error messages ("argument 0
  // 'x'"). Default: the names ag-rewrite registered for an AG_FUNCTION, else arg0, arg1, ...
  std::vector<std::string> param_names = {};
  // Concrete functions kept per Function (least recently used evicted, code freed).
  size_t max_cached = 64;
  // Cap on traces per Function (-1: none), and what happens at the cap.
  int64_t max_traces = -1;
  TracePolicy on_max_traces = TracePolicy::error;
  // Tiered execution (with a JIT linked and jit_compile not false): the calls of a new
  // signature run on the graph interpreter while one background thread compiles it, and
  // switch to the machine code once it is ready. The first call then costs a trace, not a
  // trace and a compile. Off by default: until the switch, float results follow the
  // interpreter's kernels (a few ULP from compiled code for exp, tanh, ...; docs/jit.md,
  // "Tiered execution").
  bool tiered = false;
  // false (TensorFlow's tf.function(autograph=False)): trace the body as plain C++ would run
  // it. ag-rewrite's converted control flow then stages nothing: a tensor-dependent if, loop,
  // ?:, && or || whose condition has no value at trace time is a ConversionError naming its line
  // (ag::cond and ag::while_loop still stage). For functions whose conditions are known while
  // tracing, or to check that a function has no tensor control flow.
  bool autograph = true;
};

struct FunctionStats {
  int64_t traces = 0;       // graphs traced
  int64_t compiles = 0;     // code generations by the JIT
  int64_t memory_hits = 0;  // calls served by an in-memory concrete function
  // Of memory_hits: calls whose signature equalled the calling thread's previous lookup,
  // served by the per-thread inline cache without a table lookup (docs/performance.md, "W4").
  int64_t inline_hits = 0;
  // Of inline_hits: calls that ran the machine code straight from the cached call, without its
  // stub or per-call state (code of one result that calls no runtime helper taking the call's
  // context, with the thread's previous result free to reuse; docs/performance.md, "W4").
  int64_t direct_calls = 0;
  // Tiered execution: calls run on the interpreter while their code compiled in the background.
  int64_t interpreted_calls = 0;
  int64_t disk_hits = 0;    // machine code loaded from the on-disk cache without code generation
  int64_t evictions = 0;    // concrete functions evicted (LRU or evict())
  // Not a counter: call signatures now mapped to a more general concrete function (an
  // input_signature with unknown dims, reduce_retracing, TracePolicy::generalize); at most
  // 4 * max_cached, least recently used dropped first.
  int64_t aliases = 0;
};

namespace detail {
// Read inline by every Function call (an out-of-line getter costs as much as the check).
inline constinit std::atomic<bool> g_run_functions_eagerly{false};
}  // namespace detail

// Debugging: every Function runs its (rewritten) C++ body eagerly instead of tracing.
void run_functions_eagerly(bool enable);
inline bool functions_run_eagerly() { return detail::g_run_functions_eagerly.load(std::memory_order_relaxed); }

}  // namespace ag
