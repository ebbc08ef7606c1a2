// Golden test: loops that only a tensor can stop (beyond TensorFlow, which raises for them).
// `while (true)`, `for (;;)` and a loop on a C++ bool that a tensor-dependent break or return
// leaves become staged loops whose condition is the lowered flag; a loop that carries a C++
// counter stays plain and says why in its ag::loop_flag.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

AG_FUNCTION Tensor newton(Tensor a) {
  Tensor x = a;
  while (true) {
    Tensor next = 0.5f * (x + a / x);
    if (ag::abs(next - x) < 1e-4f) break;
    x = next;
  }
  return x;
}

AG_FUNCTION Tensor halvings(Tensor x) {
  Tensor n = 0;
  for (;; n += 1) {
    if (x < 1) break;
    x = x / 2;
  }
  return n;
}

AG_FUNCTION Tensor first_multiple(Tensor x) {
  while (true) {
    if (x % 7 == 0) return x;
    x += 1;
  }
}

AG_FUNCTION Tensor counted(Tensor x) {
  for (int i = 0;; ++i) {
    if (x > 100) break;
    x = x * 2 + i;
  }
  return x;
}
// CHECK-LABEL: AG_FUNCTION Tensor newton(Tensor a) {
// CHECK-NEXT:   Tensor x = a;
// CHECK-NEXT:   ag::Tensor ag__break_1 = false;
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return ag::and_(ag::not_(ag__break_1), [&] { return true; }, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 13)); },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         Tensor next = 0.5f * (x + a / x);
// CHECK-NEXT:         ag::if_stmt(ag::abs(next - x) < 1e-4f,
// CHECK-NEXT:             [&] { ag__break_1 = true; },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(ag__break_1), {"ag__break_1"}, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 15));
// CHECK-NEXT:         ag::if_stmt(ag::not_(ag__break_1),
// CHECK-NEXT:             [&] { x = next; },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(x), {"x"}, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 16));
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(ag__break_1, x), {"ag__break_1", "x"}, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 13));
// CHECK-NEXT:   return x;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor halvings(Tensor x) {
// CHECK-NEXT:   Tensor n = 0;
// CHECK-NEXT:   ag::Tensor ag__break_1 = false;
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return ag::and_(ag::not_(ag__break_1), [&] { return true; }, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 23)); },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         {
// CHECK-NEXT:           ag::if_stmt(x < 1,
// CHECK-NEXT:               [&] { ag__break_1 = true; },
// CHECK-NEXT:               [&] {},
// CHECK-NEXT:               ag::state(ag__break_1), {"ag__break_1"}, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 24));
// CHECK-NEXT:           ag::if_stmt(ag::not_(ag__break_1),
// CHECK-NEXT:               [&] { x = x / 2; },
// CHECK-NEXT:               [&] {},
// CHECK-NEXT:               ag::state(x), {"x"}, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 25));
// CHECK-NEXT:         }
// CHECK-NEXT:         ag::if_stmt(ag::not_(ag__break_1),
// CHECK-NEXT:             [&] { n += 1; },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(n), {"n"}, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 23));
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(ag__break_1, n, x), {"ag__break_1", "n", "x"}, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 23));
// CHECK-NEXT:   return n;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor first_multiple(Tensor x) {
// CHECK-NEXT:   ag::Tensor ag__retval;
// CHECK-NEXT:   ag::Tensor ag__do_return = false;
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return ag::and_(ag::not_(ag__do_return), [&] { return true; }, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 31)); },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         ag::if_stmt(x % 7 == 0,
// CHECK-NEXT:             [&] {
// CHECK-NEXT:               ag__retval = x;
// CHECK-NEXT:               ag__do_return = true;
// CHECK-NEXT:             },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(ag__do_return, ag__retval),
// CHECK-NEXT:             {"ag__do_return", "ag__retval"},
// CHECK-NEXT:             AG_SOURCE_LOC("tensor_stopped_loops.cpp", 32));
// CHECK-NEXT:         ag::if_stmt(ag::not_(ag__do_return),
// CHECK-NEXT:             [&] { x += 1; },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(x), {"x"}, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 33));
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(ag__do_return, ag__retval, x),
// CHECK-NEXT:       {"ag__do_return", "ag__retval", "x"},
// CHECK-NEXT:       AG_SOURCE_LOC("tensor_stopped_loops.cpp", 31));
// CHECK-NEXT:   return ag__retval;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor counted(Tensor x) {
// CHECK-NEXT:   ag::Tensor ag__break_1 = false;
// CHECK-NEXT:   for (int i = 0; ag::loop_flag(ag::not_(ag__break_1), AG_SOURCE_LOC("tensor_stopped_loops.cpp", 38), "it changes 'i' (an int), which a graph loop cannot carry: make it an ag::Tensor (or loop over ag::range)"); (ag::loop_flag(ag::not_(ag__break_1), AG_SOURCE_LOC("tensor_stopped_loops.cpp", 38), "it changes 'i' (an int), which a graph loop cannot carry: make it an ag::Tensor (or loop over ag::range)") ? void(++i) : void())) {
// CHECK-NEXT:     ag::if_stmt(x > 100,
// CHECK-NEXT:         [&] { ag__break_1 = true; },
// CHECK-NEXT:         [&] {},
// CHECK-NEXT:         ag::state(ag__break_1), {"ag__break_1"}, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 39));
// CHECK-NEXT:     ag::if_stmt(ag::not_(ag__break_1),
// CHECK-NEXT:         [&] { x = x * 2 + i; },
// CHECK-NEXT:         [&] {},
// CHECK-NEXT:         ag::state(x), {"x"}, AG_SOURCE_LOC("tensor_stopped_loops.cpp", 40));
// CHECK-NEXT:   }
// CHECK-NEXT:   return x;
// CHECK-NEXT: }
