// A file with syntax errors: the compiler's diagnostics, exit 1, nothing written.
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags 2>&1 | grep -v CHECK | FileCheck %s
// RUN: test ! -e %t.out
#include <ag/ag.h>

AG_FUNCTION ag::Tensor broken(ag::Tensor x) {
  if (x > 0) x = -x
  return x;
}
// CHECK: syntax_error.cpp:7:20: error: expected ';' after expression
// CHECK-NOT: Stack dump
