// Error: a goto that would cross the body of a staged construct, or the guard that follows a
// lowered break/continue/return, cannot be converted: the jump would have to leave or enter a
// lambda. A goto whose label ends up in the same lambda is kept (golden/goto_statements.cpp).
// RUN: not ag-rewrite %s -- %flags 2>&1 | grep -v CHECK | FileCheck %s --implicit-check-not=error:
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags 2>/dev/null && test ! -e %t.out
#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  while (x < 10) {
    x += 1;
    if (x == 5) goto out;
  }
out:
  return x;
}

AG_FUNCTION ag::Tensor into_staged(ag::Tensor x, bool skip) {
  if (skip) goto inside;
  if (x > 0) {
  inside:
    x = x - 1;
  }
  return x;
}

AG_FUNCTION ag::Tensor across_guard(ag::Tensor x, bool again) {
  while (x < 10) {
  top:
    x += 1;
    if (x == 5) break;
    if (again) goto top;
  }
  return x;
}
// CHECK: goto.cpp:11:17: error: goto cannot be converted: it crosses the body of a tensor-dependent if; use break, continue or return
// CHECK: goto.cpp:18:13: error: goto cannot be converted: it crosses the body of a tensor-dependent if; use break, continue or return
// CHECK: goto.cpp:31:16: error: goto cannot be converted: the statements after a lowered break, continue or return run in a staged guard (a lambda), and this jump would cross it; use break, continue or return
