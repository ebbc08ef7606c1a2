// Error: a variable declared in the condition of a tensor-dependent statement.
// RUN: not ag-rewrite %s -- %flags 2>&1 | grep -v CHECK | FileCheck %s
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags 2>/dev/null && test ! -e %t.out
#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  while (ag::Tensor d = x - 3) x = d;
  return x;
}
// CHECK: condition_variable.cpp:7:21: error: a variable declared in the condition of a tensor-dependent while cannot be converted; declare it before the while
