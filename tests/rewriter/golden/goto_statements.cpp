// Golden test of goto: a goto whose label is in the same staged body (the same lambda after the
// rewrite) is kept as written, as is one outside every staged body; it is plain C++ that runs
// while tracing. (Crossing a staged body or a guard is an error: diagnostics/goto.cpp.)
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

AG_FUNCTION ag::Tensor inside_one_body(ag::Tensor x, bool skip) {
  if (skip) goto start;
  x = x + 1;
start:
  while (x < 100) {
    if (skip) goto doubled;
    x = x + 10;
  doubled:
    x = x * 2;
  }
  return x;
}
// CHECK-LABEL: AG_FUNCTION ag::Tensor inside_one_body(ag::Tensor x, bool skip) {
// CHECK-NEXT:   if (skip) goto start;
// CHECK-NEXT:   x = x + 1;
// CHECK-NEXT: start:
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return x < 100; },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         if (skip) goto doubled;
// CHECK-NEXT:         x = x + 10;
// CHECK-NEXT:       doubled:
// CHECK-NEXT:         x = x * 2;
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(x), {"x"}, AG_SOURCE_LOC("goto_statements.cpp", 12));
// CHECK-NEXT:   return x;
// CHECK-NEXT: }
