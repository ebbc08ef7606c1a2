// Golden test of the graph passes, through ag-emit --emit=passes (the graph after each pass).
// RUN: ag-emit %s folded int32[4] --emit=passes | FileCheck %s --check-prefix=FOLD
// RUN: ag-emit %s shared int32[4] --emit=passes | FileCheck %s --check-prefix=CSE
// RUN: ag-emit %s unused float32[] --emit=passes | FileCheck %s --check-prefix=PRUNE
#include <ag/ag.h>

using ag::Tensor;

// Constant folding: the length of a statically shaped x, times 2, is a constant.
AG_FUNCTION Tensor folded(Tensor x) { return x + ag::cast(ag::shape_of(x)[0], ag::int32) * 2; }
// FOLD-LABEL: // ---- 00-traced
// FOLD:       ShapeOf(%0) : i64[1]
// FOLD:       Mul(
// FOLD-LABEL: // ---- 02-fold
// FOLD-NOT:   ShapeOf(
// FOLD-NOT:   Mul(
// FOLD:       Const() {value=8} : i32[]
// FOLD-NEXT:  Add(%0, %{{[0-9]+}}) : i32[4]
// FOLD-LABEL: // ---- 06-prune
// FOLD-NEXT:  graph folded(%0: i32[4]) -> (i32[4]) {
// FOLD-NEXT:    %1 = Const() {value=8} : i32[]
// FOLD-NEXT:    %2 = Add(%0, %1) : i32[4]
// FOLD-NEXT:    return %2

// Common subexpressions: x * 2 twice becomes once.
AG_FUNCTION Tensor shared(Tensor x) {
  Tensor a = x * 2 + 1;
  Tensor b = x * 2 - 1;
  return a * b;
}
// CSE-LABEL: // ---- 02-fold
// CSE:       Mul(%0,
// CSE:       Mul(%0,
// CSE-LABEL: // ---- 03-cse
// CSE:       Mul(%0,
// CSE-NOT:   Mul(%0,
// CSE:       return

// Pruning: an unused value is dropped; a print stays (a side effect).
AG_FUNCTION Tensor unused(Tensor x) {
  Tensor waste = ag::exp(x) * 10;
  ag::print("x is", x);
  return x + 1;
}
// PRUNE-LABEL: // ---- 00-traced
// PRUNE:       Exp(%0)
// PRUNE-LABEL: // ---- 06-prune
// PRUNE-NOT:   Exp(
// PRUNE:       Print(%0)
