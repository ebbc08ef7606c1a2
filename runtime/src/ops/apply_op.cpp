// apply_op, the entry point of every op: eager when all inputs are concrete, recorded into the
// graph being traced when one is symbolic. Alone in its file so that runtime_tests can link its
// own copy, compiled with AG_EAGER_VIA_GRAPH_HOOK (tests/runtime/CMakeLists.txt), in place of
// the library's: the test mode then costs the library's eager path nothing.
#include "../trace/frame.h"
#include "ag/detail/ops_internal.h"

namespace ag::detail {

Tensor apply_op(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc) {
  bool symbolic = false;
  for (const Tensor& t : inputs) {
    check_readable(t, op, loc);
    symbolic |= t.impl()->kind == ImplKind::Symbolic;
  }
  if (symbolic) return trace_op(op, inputs, attrs, loc);
#ifdef AG_EAGER_VIA_GRAPH_HOOK
  if (g_eager_via_graph.load(std::memory_order_relaxed)) return eval_via_graph(op, inputs, attrs, loc);
#endif
  return eval_op(op, inputs, attrs, loc);
}

}  // namespace ag::detail
