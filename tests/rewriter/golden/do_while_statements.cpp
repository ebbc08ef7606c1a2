// Golden test of the do-while converter: ag::do_while_stmt(body, cond, state...).
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

AG_FUNCTION Tensor count_down(Tensor x) {
  Tensor steps = 0;
  do {
    x = x - 3;
    steps += 1;
  } while (x > 0);
  return steps;
}

// CHECK-LABEL: AG_FUNCTION Tensor count_down(Tensor x) {
// CHECK-NEXT:   Tensor steps = 0;
// CHECK-NEXT:   ag::do_while_stmt(
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         x = x - 3;
// CHECK-NEXT:         steps += 1;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] { return x > 0; },
// CHECK-NEXT:       ag::state(steps, x), {"steps", "x"}, AG_SOURCE_LOC("do_while_statements.cpp", 10));
// CHECK-NEXT:   return steps;
// CHECK-NEXT: }
