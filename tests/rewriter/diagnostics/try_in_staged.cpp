// Error: try/catch inside a tensor-conditioned statement.
// RUN: not ag-rewrite %s -- %flags 2>&1 | grep -v CHECK | FileCheck %s
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags 2>/dev/null && test ! -e %t.out
#include <ag/ag.h>

#include <stdexcept>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  try {  // around converted code: fine
    if (x > 0) x = -x;
  } catch (const std::exception&) {
  }
  if (x < 0) {
    try {
      x = x * 2;
    } catch (...) {
    }
  }
  return x;
}
// CHECK: try_in_staged.cpp:14:5: error: try/catch inside a tensor-dependent if cannot be converted: the staged body runs while tracing; move the try/catch around the if
// CHECK-NOT: try_in_staged.cpp:8
