// Golden test of the break converter: a break leaving a staged body becomes a flag; staged
// loops test it (extra test / condition), plain loops through ag::loop_flag; the rest of the
// body is guarded by it. A break that leaves no lambda stays a break.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

AG_FUNCTION Tensor first_over(Tensor n, Tensor limit) {
  Tensor r = 0;
  for (auto i : ag::range(n)) {
    if (i * i > limit) {
      r = i;
      break;
    }
    r = -i;
  }
  return r;
}

AG_FUNCTION Tensor break_in_while(Tensor x) {
  while (x < 1000) {
    x = x * 2;
    if (x % 3 == 0) break;
  }
  return x;
}

// A plain loop with a tensor-dependent break: the loop's condition checks the flag.
AG_FUNCTION Tensor plain_loop(Tensor x) {
  for (int i = 0; i < 5; ++i) {
    if (x > 20) break;
    x = x * 2;
  }
  for (int k : {1, 2, 3}) {
    if (k == 2) break;
    if (x > 50) break;
  }
  return x;
}

// CHECK-LABEL: AG_FUNCTION Tensor first_over(Tensor n, Tensor limit) {
// CHECK-NEXT:   Tensor r = 0;
// CHECK-NEXT:   ag::Tensor ag__break_1 = false;
// CHECK-NEXT:   ag::for_stmt(ag::range(n), [&] { return ag::not_(ag__break_1); },
// CHECK-NEXT:       [&](auto i) {
// CHECK-NEXT:         ag::if_stmt(i * i > limit,
// CHECK-NEXT:             [&] {
// CHECK-NEXT:               r = i;
// CHECK-NEXT:               ag__break_1 = true;
// CHECK-NEXT:             },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(ag__break_1, r), {"ag__break_1", "r"}, AG_SOURCE_LOC("break_statements.cpp", 13));
// CHECK-NEXT:         ag::if_stmt(ag::not_(ag__break_1),
// CHECK-NEXT:             [&] { r = -i; },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(r), {"r"}, AG_SOURCE_LOC("break_statements.cpp", 17));
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(ag__break_1, r), {"ag__break_1", "r"}, AG_SOURCE_LOC("break_statements.cpp", 12));
// CHECK-NEXT:   return r;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor break_in_while(Tensor x) {
// CHECK-NEXT:   ag::Tensor ag__break_1 = false;
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return ag::and_(ag::not_(ag__break_1), [&] { return x < 1000; }, AG_SOURCE_LOC("break_statements.cpp", 23)); },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         x = x * 2;
// CHECK-NEXT:         ag::if_stmt(x % 3 == 0,
// CHECK-NEXT:             [&] { ag__break_1 = true; },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(ag__break_1), {"ag__break_1"}, AG_SOURCE_LOC("break_statements.cpp", 25));
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(ag__break_1, x), {"ag__break_1", "x"}, AG_SOURCE_LOC("break_statements.cpp", 23));
// CHECK-NEXT:   return x;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor plain_loop(Tensor x) {
// CHECK-NEXT:   ag::Tensor ag__break_1 = false;
// CHECK-NEXT:   for (int i = 0; ag::loop_flag(ag::not_(ag__break_1), AG_SOURCE_LOC("break_statements.cpp", 32), "it changes 'i' (an int), which a graph loop cannot carry: make it an ag::Tensor (or loop over ag::range)") && (i < 5); (ag::loop_flag(ag::not_(ag__break_1), AG_SOURCE_LOC("break_statements.cpp", 32), "it changes 'i' (an int), which a graph loop cannot carry: make it an ag::Tensor (or loop over ag::range)") ? void(++i) : void())) {
// CHECK-NEXT:     ag::if_stmt(x > 20,
// CHECK-NEXT:         [&] { ag__break_1 = true; },
// CHECK-NEXT:         [&] {},
// CHECK-NEXT:         ag::state(ag__break_1), {"ag__break_1"}, AG_SOURCE_LOC("break_statements.cpp", 33));
// CHECK-NEXT:     ag::if_stmt(ag::not_(ag__break_1),
// CHECK-NEXT:         [&] { x = x * 2; },
// CHECK-NEXT:         [&] {},
// CHECK-NEXT:         ag::state(x), {"x"}, AG_SOURCE_LOC("break_statements.cpp", 34));
// CHECK-NEXT:   }
// CHECK-NEXT:   ag::Tensor ag__break_2 = false;
// CHECK-NEXT:   for (int k : {1, 2, 3}) {
// CHECK-NEXT:     if (!ag::loop_flag(ag::not_(ag__break_2), AG_SOURCE_LOC("break_statements.cpp", 36))) break;
// CHECK-NEXT:     if (k == 2) {
// CHECK-NEXT:       ag__break_2 = true;
// CHECK-NEXT:     }
// CHECK-NEXT:     ag::if_stmt(ag::not_(ag__break_2),
// CHECK-NEXT:         [&] {
// CHECK-NEXT:           ag::if_stmt(x > 50,
// CHECK-NEXT:               [&] { ag__break_2 = true; },
// CHECK-NEXT:               [&] {},
// CHECK-NEXT:               ag::state(ag__break_2), {"ag__break_2"}, AG_SOURCE_LOC("break_statements.cpp", 38));
// CHECK-NEXT:         },
// CHECK-NEXT:         [&] {},
// CHECK-NEXT:         ag::state(ag__break_2), {"ag__break_2"}, AG_SOURCE_LOC("break_statements.cpp", 38));
// CHECK-NEXT:   }
// CHECK-NEXT:   return x;
// CHECK-NEXT: }
