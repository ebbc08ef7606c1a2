// Golden test of liveness (liveness.cpp): a staged construct's state is only the modified
// variables live after it (loops: or at their head), as AutoGraph decides.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

// t is dead after the guard of the early return: no output of that if, so its rank may
// differ between the branches.
AG_FUNCTION Tensor dead_after_if(Tensor x, Tensor flag) {
  Tensor t = x;
  if (flag) return ag::reduce_sum(t);
  t = ag::stack({t, t});
  return ag::reduce_sum(t);
}

// square is assigned before it is read in every iteration and unused after: not carried.
AG_FUNCTION Tensor loop_temporary(Tensor n) {
  Tensor i = 0, total = 0, square;
  while (i < n) {
    square = i * i;
    total += square;
    i += 1;
  }
  return total;
}

// prev is read before it is assigned in the body (live at the loop's head), though dead after
// the loop: carried.
AG_FUNCTION Tensor live_at_head(Tensor n) {
  Tensor prev = 0, cur = 1, i = 0;
  while (i < n) {
    Tensor next = prev + cur;
    prev = cur;
    cur = next;
    i += 1;
  }
  return cur;
}

// A variable a lambda reads may be read whenever the lambda runs: always live.
AG_FUNCTION Tensor read_by_lambda(Tensor x) {
  Tensor y = x;
  auto get = [&] { return y; };
  if (x > 0) y = x * 2;
  return get();
}

// u is modified in the if and read only after it was overwritten: not an output of the if.
AG_FUNCTION Tensor overwritten_after_if(Tensor x) {
  Tensor u = x;
  if (x > 0) u = ag::stack({x, x});
  u = x + 1;
  return u;
}
// CHECK-LABEL: AG_FUNCTION Tensor dead_after_if(Tensor x, Tensor flag) {
// CHECK-NEXT:   ag::Tensor ag__retval;
// CHECK-NEXT:   ag::Tensor ag__do_return = false;
// CHECK-NEXT:   Tensor t = x;
// CHECK-NEXT:   ag::if_stmt(flag,
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         ag__retval = ag::reduce_sum(t);
// CHECK-NEXT:         ag__do_return = true;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(ag__do_return, ag__retval),
// CHECK-NEXT:       {"ag__do_return", "ag__retval"},
// CHECK-NEXT:       AG_SOURCE_LOC("liveness.cpp", 13));
// CHECK-NEXT:   ag::if_stmt(ag::not_(ag__do_return),
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         t = ag::stack({t, t});
// CHECK-NEXT:         ag__retval = ag::reduce_sum(t);
// CHECK-NEXT:         ag__do_return = true;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(ag__do_return, ag__retval),
// CHECK-NEXT:       {"ag__do_return", "ag__retval"},
// CHECK-NEXT:       AG_SOURCE_LOC("liveness.cpp", 14));
// CHECK-NEXT:   return ag__retval;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor loop_temporary(Tensor n) {
// CHECK-NEXT:   Tensor i = 0, total = 0, square;
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return i < n; },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         square = i * i;
// CHECK-NEXT:         total += square;
// CHECK-NEXT:         i += 1;
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(i, total), {"i", "total"}, AG_SOURCE_LOC("liveness.cpp", 21));
// CHECK-NEXT:   return total;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor live_at_head(Tensor n) {
// CHECK-NEXT:   Tensor prev = 0, cur = 1, i = 0;
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return i < n; },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         Tensor next = prev + cur;
// CHECK-NEXT:         prev = cur;
// CHECK-NEXT:         cur = next;
// CHECK-NEXT:         i += 1;
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(cur, i, prev), {"cur", "i", "prev"}, AG_SOURCE_LOC("liveness.cpp", 33));
// CHECK-NEXT:   return cur;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor read_by_lambda(Tensor x) {
// CHECK-NEXT:   Tensor y = x;
// CHECK-NEXT:   auto get = [&] { return y; };
// CHECK-NEXT:   ag::if_stmt(x > 0,
// CHECK-NEXT:       [&] { y = x * 2; },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(y), {"y"}, AG_SOURCE_LOC("liveness.cpp", 46));
// CHECK-NEXT:   return get();
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor overwritten_after_if(Tensor x) {
// CHECK-NEXT:   Tensor u = x;
// CHECK-NEXT:   ag::if_stmt(x > 0,
// CHECK-NEXT:       [&] { u = ag::stack({x, x}); },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(), {}, AG_SOURCE_LOC("liveness.cpp", 53));
// CHECK-NEXT:   u = x + 1;
// CHECK-NEXT:   return u;
// CHECK-NEXT: }
