// AG_DO_NOT_CONVERT (tf.autograph.experimental.do_not_convert): a function keeps its control flow
// as written, even where another declaration marks it AG_FUNCTION, and a converted function that
// calls it draws no unmarked-callee warning. The converted neighbour still is converted.
// RUN: ag-rewrite %s -o %t.cpp -- %flags 2>&1 | (grep -v CHECK || true) | FileCheck %s --check-prefix=DIAG --allow-empty
// RUN: grep -v CHECK %t.cpp | FileCheck %s --check-prefix=OUT
#include <ag/ag.h>

AG_DO_NOT_CONVERT ag::Tensor eager_only(ag::Tensor x) {
  if (x > 0) return x;
  return -x;
}

AG_FUNCTION ag::Tensor both(ag::Tensor x);
AG_DO_NOT_CONVERT ag::Tensor both(ag::Tensor x) {
  while (x > 10) x = x - 10;
  return x;
}

AG_FUNCTION ag::Tensor converted(ag::Tensor x) {
  if (x > 0) x = x * 2;
  return eager_only(x) + both(x);
}
// DIAG-NOT: warning
// OUT: AG_DO_NOT_CONVERT ag::Tensor eager_only(ag::Tensor x) {
// OUT-NEXT: if (x > 0) return x;
// OUT: AG_DO_NOT_CONVERT ag::Tensor both(ag::Tensor x) {
// OUT-NEXT: while (x > 10) x = x - 10;
// OUT: ag::if_stmt(
