// ag-emit's compiler flags after `--` reach the rewrite step as well as the compiler: the header
// below is found only through -I, and AG_EMIT_TEST_SCALE is defined only by -D (both must be the
// driver program's include directories and definitions, which ag_rewrite_sources passes to
// ag-rewrite; as compile options they reached the compiler alone, and the rewrite failed).
// RUN: ag-emit %s scaled float32[4] --emit=graph -- -I%S/include -DAG_EMIT_TEST_SCALE=3.0f | FileCheck %s
#include "emit_scale.h"

AG_FUNCTION ag::Tensor scaled(ag::Tensor x) {
  ag::Tensor y = emit_scale(x);
  if (ag::reduce_sum(y) > 0.0f) y = y + 1.0f;
  return y;
}
// CHECK: graph scaled(
// CHECK: Const() {value=3}
// CHECK: If(
