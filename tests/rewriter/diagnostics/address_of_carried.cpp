// Error: the address of a carried variable taken inside a staged construct.
// RUN: not ag-rewrite %s -- %flags 2>&1 | grep -v CHECK | FileCheck %s
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags 2>/dev/null && test ! -e %t.out
#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  ag::Tensor y = 0;
  while (x > 0) {
    ag::Tensor* p = &y;
    *p = *p + x;
    x -= 1;
  }
  return y;
}
// CHECK: address_of_carried.cpp:9:21: error: cannot take the address of 'y' inside a tensor-dependent while: 'y' is carried through the staged while and is rebound by it; use the variable directly
