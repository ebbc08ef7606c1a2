// Error: a break out of a switch from inside a tensor-dependent construct.
// RUN: not ag-rewrite %s -- %flags 2>&1 | grep -v CHECK | FileCheck %s
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags 2>/dev/null && test ! -e %t.out
#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x, int mode) {
  switch (mode) {
    case 0:
      if (x > 0) break;
      x = -x;
      break;
    default: break;
  }
  return x;
}
// CHECK: break_out_of_switch.cpp:9:18: error: break out of a switch from inside a tensor-dependent if cannot be converted
