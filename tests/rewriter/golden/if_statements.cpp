// Golden test of the if converter: if / else if / else on tensors become ag::if_stmt with the
// assigned outer variables as state; bool conditions stay C++.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

AG_FUNCTION ag::Tensor sign(ag::Tensor x, bool flip) {
  ag::Tensor s = 0;
  if (flip) x = -x;
  if (x > 0) {
    s = 1;
  } else if (x < 0) {
    s = -1;
  }
  return s;
}
// CHECK-LABEL: AG_FUNCTION ag::Tensor sign(ag::Tensor x, bool flip) {
// CHECK-NEXT:   ag::Tensor s = 0;
// CHECK-NEXT:   if (flip) x = -x;
// CHECK-NEXT:   ag::if_stmt(x > 0,
// CHECK-NEXT:       [&] { s = 1; },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         ag::if_stmt(x < 0,
// CHECK-NEXT:             [&] { s = -1; },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(s), {"s"}, AG_SOURCE_LOC("if_statements.cpp", 12));
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(s), {"s"}, AG_SOURCE_LOC("if_statements.cpp", 10));
// CHECK-NEXT:   return s;
// CHECK-NEXT: }

// An if with an init statement keeps the init's scope.
AG_FUNCTION ag::Tensor with_init(ag::Tensor x) {
  if (ag::Tensor d = x - 1; d > 0) x = d;
  return x;
}
// CHECK-LABEL: AG_FUNCTION ag::Tensor with_init(ag::Tensor x) {
// CHECK-NEXT:   {
// CHECK-NEXT:     ag::Tensor d = x - 1;
// CHECK-NEXT:     ag::if_stmt(d > 0,
// CHECK-NEXT:         [&] { x = d; },
// CHECK-NEXT:         [&] {},
// CHECK-NEXT:         ag::state(x), {"x"}, AG_SOURCE_LOC("if_statements.cpp", 34));
// CHECK-NEXT:   }
// CHECK-NEXT:   return x;

// Only variables declared outside a branch are state; a branch's own locals stay inside.
AG_FUNCTION ag::Tensor branch_locals(ag::Tensor x) {
  ag::Tensor y;
  if (x > 0) {
    ag::Tensor t = x * 2;  // local to the branch
    y = t + 1;
  } else {
    y = x;
  }
  return y;
}
// CHECK-LABEL: AG_FUNCTION ag::Tensor branch_locals(ag::Tensor x) {
// CHECK-NEXT:   ag::Tensor y;
// CHECK-NEXT:   ag::if_stmt(x > 0,
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         ag::Tensor t = x * 2;  // local to the branch
// CHECK-NEXT:         y = t + 1;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] { y = x; },
// CHECK-NEXT:       ag::state(y), {"y"}, AG_SOURCE_LOC("if_statements.cpp", 50));

// A function without tensor control flow is left exactly as written.
AG_FUNCTION ag::Tensor untouched(ag::Tensor x, int k) {
  if (k > 0)   return x  *  k;
  return x;
}
// CHECK-LABEL: AG_FUNCTION ag::Tensor untouched(ag::Tensor x, int k) {
// CHECK-NEXT:   if (k > 0)   return x  *  k;
// CHECK-NEXT:   return x;
// CHECK-NEXT: }

// Comments between the condition, the branches and `else` stay with the branches.
AG_FUNCTION ag::Tensor commented(ag::Tensor n) {
  if (n > 3)  // big
  {
    n = n - 1;
  } else {  // small
    n = n + 1;
  }
  return n;
}
// CHECK-LABEL: AG_FUNCTION ag::Tensor commented(ag::Tensor n) {
// CHECK-NEXT:   ag::if_stmt(n > 3,
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         // big
// CHECK-NEXT:         n = n - 1;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         // small
// CHECK-NEXT:         n = n + 1;
// CHECK-NEXT:       },
