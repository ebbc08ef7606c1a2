// Golden test of the continue converter: a flag declared at the start of each iteration, the
// rest of the iteration guarded by it; a C-style for still runs its increment.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

AG_FUNCTION Tensor sum_of_odds(Tensor n) {
  Tensor s = 0;
  for (auto i : ag::range(n)) {
    if (i % 2 == 0) continue;
    s += i;
  }
  return s;
}

AG_FUNCTION Tensor skip_threes(Tensor n) {
  Tensor s = 0;
  for (Tensor i = 0; i < n; i += 1) {
    if (i % 3 == 0) continue;
    s += i;
  }
  return s;
}

// CHECK-LABEL: AG_FUNCTION Tensor sum_of_odds(Tensor n) {
// CHECK-NEXT:   Tensor s = 0;
// CHECK-NEXT:   ag::for_stmt(ag::range(n), ag::no_extra_test,
// CHECK-NEXT:       [&](auto i) {
// CHECK-NEXT:         ag::Tensor ag__continue_1 = false;
// CHECK-NEXT:         ag::if_stmt(i % 2 == 0,
// CHECK-NEXT:             [&] { ag__continue_1 = true; },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(ag__continue_1), {"ag__continue_1"}, AG_SOURCE_LOC("continue_statements.cpp", 12));
// CHECK-NEXT:         ag::if_stmt(ag::not_(ag__continue_1),
// CHECK-NEXT:             [&] { s += i; },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(s), {"s"}, AG_SOURCE_LOC("continue_statements.cpp", 13));
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(s), {"s"}, AG_SOURCE_LOC("continue_statements.cpp", 11));
// CHECK-NEXT:   return s;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor skip_threes(Tensor n) {
// CHECK-NEXT:   Tensor s = 0;
// CHECK-NEXT:   {
// CHECK-NEXT:     Tensor i = 0;
// CHECK-NEXT:     ag::while_stmt(
// CHECK-NEXT:         [&] { return i < n; },
// CHECK-NEXT:         [&] {
// CHECK-NEXT:           ag::Tensor ag__continue_1 = false;
// CHECK-NEXT:           {
// CHECK-NEXT:             ag::if_stmt(i % 3 == 0,
// CHECK-NEXT:                 [&] { ag__continue_1 = true; },
// CHECK-NEXT:                 [&] {},
// CHECK-NEXT:                 ag::state(ag__continue_1), {"ag__continue_1"}, AG_SOURCE_LOC("continue_statements.cpp", 21));
// CHECK-NEXT:             ag::if_stmt(ag::not_(ag__continue_1),
// CHECK-NEXT:                 [&] { s += i; },
// CHECK-NEXT:                 [&] {},
// CHECK-NEXT:                 ag::state(s), {"s"}, AG_SOURCE_LOC("continue_statements.cpp", 22));
// CHECK-NEXT:           }
// CHECK-NEXT:           i += 1;
// CHECK-NEXT:         },
// CHECK-NEXT:         ag::state(i, s), {"i", "s"}, AG_SOURCE_LOC("continue_statements.cpp", 20));
// CHECK-NEXT:   }
// CHECK-NEXT:   return s;
// CHECK-NEXT: }
