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

// Arms of a non-tensor type are converted too when the value goes into a tensor operator (here
// through ag::Operand, whose constructor also takes a defaulted std::source_location): found
// by the program fuzzer, which had left them as a C++ `?:` that failed while tracing.
AG_FUNCTION Tensor step(Tensor x) {
  Tensor c = 0;
  c += x > 0 ? 1 : 2;
  return c * (x < 0 ? 3 : 4);
}

// CHECK-LABEL: AG_FUNCTION Tensor step(Tensor x) {
// CHECK-NEXT:   Tensor c = 0;
// CHECK-NEXT:   c += ag::if_exp(x > 0, [&] { return 1; }, [&] { return 2; }, AG_SOURCE_LOC("conditional_expressions.cpp", 24));
// CHECK-NEXT:   return c * (ag::if_exp(x < 0, [&] { return 3; }, [&] { return 4; }, AG_SOURCE_LOC("conditional_expressions.cpp", 25)));
// CHECK-NEXT: }
