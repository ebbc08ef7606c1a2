// Golden test of the while converter: a tensor condition becomes ag::while_stmt with the
// condition and body as lambdas and the loop-carried variables as state.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

AG_FUNCTION Tensor collatz(Tensor n) {
  Tensor steps = 0;
  while (n > 1) {
    if (n % 2 == 0) n = n / 2;
    else n = 3 * n + 1;
    steps += 1;
  }
  return steps;
}

// The body's own locals are not carried; a plain int loop stays C++.
AG_FUNCTION Tensor body_locals(Tensor x) {
  while (x < 100) {
    Tensor twice = x * 2;
    x = twice + 1;
  }
  int i = 0;
  while (i < 3) ++i;
  return x + i;
}

// CHECK-LABEL: AG_FUNCTION Tensor collatz(Tensor n) {
// CHECK-NEXT:   Tensor steps = 0;
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return n > 1; },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         ag::if_stmt(n % 2 == 0,
// CHECK-NEXT:             [&] { n = n / 2; },
// CHECK-NEXT:             [&] { n = 3 * n + 1; },
// CHECK-NEXT:             ag::state(n), {"n"}, AG_SOURCE_LOC("while_statements.cpp", 12));
// CHECK-NEXT:         steps += 1;
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(n, steps), {"n", "steps"}, AG_SOURCE_LOC("while_statements.cpp", 11));
// CHECK-NEXT:   return steps;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor body_locals(Tensor x) {
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return x < 100; },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         Tensor twice = x * 2;
// CHECK-NEXT:         x = twice + 1;
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(x), {"x"}, AG_SOURCE_LOC("while_statements.cpp", 21));
// CHECK-NEXT:   int i = 0;
// CHECK-NEXT:   while (i < 3) ++i;
// CHECK-NEXT:   return x + i;
// CHECK-NEXT: }
