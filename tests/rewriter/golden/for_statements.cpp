// Golden test of the C-style for converter: `init;` then ag::while_stmt whose body ends with
// the increment; a variable declared by the init is scoped with a block.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

AG_FUNCTION Tensor factorial(Tensor n) {
  Tensor result = 1;
  for (Tensor i = 1; i <= n; i += 1) result *= i;
  return result;
}

AG_FUNCTION Tensor outer_counter(Tensor n) {
  Tensor i, s = 0;
  for (i = 0; i < n; i += 2) s += i;
  return s + i;
}

// CHECK-LABEL: AG_FUNCTION Tensor factorial(Tensor n) {
// CHECK-NEXT:   Tensor result = 1;
// CHECK-NEXT:   {
// CHECK-NEXT:     Tensor i = 1;
// CHECK-NEXT:     ag::while_stmt(
// CHECK-NEXT:         [&] { return i <= n; },
// CHECK-NEXT:         [&] {
// CHECK-NEXT:           result *= i;
// CHECK-NEXT:           i += 1;
// CHECK-NEXT:         },
// CHECK-NEXT:         ag::state(i, result), {"i", "result"}, AG_SOURCE_LOC("for_statements.cpp", 11));
// CHECK-NEXT:   }
// CHECK-NEXT:   return result;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor outer_counter(Tensor n) {
// CHECK-NEXT:   Tensor i, s = 0;
// CHECK-NEXT:   i = 0;
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return i < n; },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         s += i;
// CHECK-NEXT:         i += 2;
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(i, s), {"i", "s"}, AG_SOURCE_LOC("for_statements.cpp", 17));
// CHECK-NEXT:   return s + i;
// CHECK-NEXT: }
