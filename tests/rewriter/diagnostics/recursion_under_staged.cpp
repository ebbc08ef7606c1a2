// Error: an AG_FUNCTION that calls itself under tensor control flow. Tracing stages both
// branches of a tensor-dependent if (and every loop body, every operand ?:, && and || may skip)
// whatever the tensor's value, so a recursion that ends eagerly never ends while tracing. A
// plain C++ argument other than the caller's own parameter may end it: no error then (the
// runtime's trace-depth guard stops it if it does not).
// RUN: not ag-rewrite %s -- %flags 2>&1 | grep -v CHECK | FileCheck %s --implicit-check-not=error:
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags 2>/dev/null && test ! -e %t.out
#include <ag/ag.h>

AG_FUNCTION ag::Tensor fact(ag::Tensor n) {
  if (n <= 1) return ag::Tensor(1);
  return n * fact(n - 1);
}

AG_FUNCTION ag::Tensor sum_to(ag::Tensor n) {
  ag::Tensor r = 0;
  if (n > 0) r = n + sum_to(n - 1);
  return r;
}

AG_FUNCTION ag::Tensor fact_expr(ag::Tensor n) { return n > 1 ? n * fact_expr(n - 1) : n; }

AG_FUNCTION ag::Tensor halve(ag::Tensor x, float scale) {
  while (x > 1) x = halve(x / 2, scale);  // `scale` is forwarded: it cannot end the recursion
  return x * scale;
}

AG_FUNCTION ag::Tensor any_positive(ag::Tensor x) { return x > 0 || any_positive(x + 1); }

// No error: a C++ argument changes (and ends the recursion while tracing).
AG_FUNCTION ag::Tensor bounded(ag::Tensor x, int depth) {
  if (x > 0 && depth > 0) x = bounded(x - 1, depth - 1);
  return x;
}
AG_FUNCTION ag::Tensor stop_next_time(ag::Tensor x, bool stop) {
  if (stop) return x;
  if (x > 0) return -x;
  return stop_next_time(x + 1, true);
}
// No error: the recursion is under plain C++ control flow only.
AG_FUNCTION ag::Tensor power(ag::Tensor x, int k) {
  if (k == 0) return ag::ones_like(x);
  return x * power(x, k - 1);
}
// No error: another function under the tensor-dependent if.
AG_FUNCTION ag::Tensor calls_fact(ag::Tensor n) {
  ag::Tensor r = n;
  if (n > 1) r = fact(n);
  return r;
}
// CHECK: recursion_under_staged.cpp:12:14: error: 'fact' calls itself under a tensor-dependent if, which tracing stages whatever the tensor's value, so tracing 'fact' would recurse without end; write the recursion as a loop on tensors (a while loop on a tensor condition that updates the values the recursive call would take)
// CHECK: recursion_under_staged.cpp:11:3: note: a return, break or continue inside this tensor-dependent if decides at run time whether the statements after it run, so they are staged
// CHECK: recursion_under_staged.cpp:17:22: error: 'sum_to' calls itself under a tensor-dependent if,
// CHECK: recursion_under_staged.cpp:17:3: note: the tensor-dependent if that stages the call
// CHECK: recursion_under_staged.cpp:21:69: error: 'fact_expr' calls itself under a tensor-dependent conditional expression,
// CHECK: recursion_under_staged.cpp:21:63: note: the tensor-dependent conditional expression that stages the call
// CHECK: recursion_under_staged.cpp:24:21: error: 'halve' calls itself under a tensor-dependent while,
// CHECK: recursion_under_staged.cpp:24:3: note: the tensor-dependent while that stages the call
// CHECK: recursion_under_staged.cpp:28:69: error: 'any_positive' calls itself under a tensor-dependent ||,
// CHECK: recursion_under_staged.cpp:28:66: note: the tensor-dependent || that stages the call
// CHECK-NOT: note:
