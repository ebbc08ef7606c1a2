// Golden test of the conditional-expression converter: `c ? a : b` with a tensor condition
// becomes ag::if_exp with both arms as lambdas.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

AG_FUNCTION Tensor magnitude(Tensor x) {
  Tensor y = x > 0 ? x : -x;
  return x > 10 ? y * 2 : y;
}

// CHECK-LABEL: AG_FUNCTION Tensor magnitude(Tensor x) {
// CHECK-NEXT:   Tensor y = ag::if_exp(x > 0, [&] { return x; }, [&] { return -x; }, AG_SOURCE_LOC("conditional_expressions.cpp", 10));
// CHECK-NEXT:   return ag::if_exp(x > 10, [&] { return y * 2; }, [&] { return y; }, AG_SOURCE_LOC("conditional_expressions.cpp", 11));
// CHECK-NEXT: }
