// Error: a goto across the body of a staged construct cannot be converted.
// RUN: not ag-rewrite %s -- %flags 2>&1 | grep -v CHECK | FileCheck %s
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
// CHECK: goto.cpp:9:17: error: goto cannot be converted: it crosses the body of a tensor-dependent if; use break, continue or return
