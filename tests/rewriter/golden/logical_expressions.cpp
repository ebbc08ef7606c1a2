// Golden test of the logical-expression converter: && / || / ! with a tensor operand become
// the lazy ag::and_ / ag::or_ / ag::not_ where the value is a condition or a tensor; where a
// bool is needed the expression stays C++.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

AG_FUNCTION Tensor logic(Tensor x, Tensor y, bool b) {
  Tensor r = 0;
  if (x > 0 && y > 0) r = 1;
  if (x > 0 || (y > 0 && b)) r = r + 2;
  if (!(x > y)) r = r + 4;
  Tensor any = x > 0 || y > 0;
  bool plain = b && b;
  return r + ag::cast(any, ag::int32) + plain;
}

// CHECK-LABEL: AG_FUNCTION Tensor logic(Tensor x, Tensor y, bool b) {
// CHECK-NEXT:   Tensor r = 0;
// CHECK-NEXT:   ag::if_stmt(ag::and_(x > 0, [&] { return y > 0; }, AG_SOURCE_LOC("logical_expressions.cpp", 12)),
// CHECK-NEXT:       [&] { r = 1; },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(r), {"r"}, AG_SOURCE_LOC("logical_expressions.cpp", 12));
// CHECK-NEXT:   ag::if_stmt(ag::or_(x > 0, [&] { return ag::and_(y > 0, [&] { return b; }, AG_SOURCE_LOC("logical_expressions.cpp", 13)); }, AG_SOURCE_LOC("logical_expressions.cpp", 13)),
// CHECK-NEXT:       [&] { r = r + 2; },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(r), {"r"}, AG_SOURCE_LOC("logical_expressions.cpp", 13));
// CHECK-NEXT:   ag::if_stmt(ag::not_((x > y), AG_SOURCE_LOC("logical_expressions.cpp", 14)),
// CHECK-NEXT:       [&] { r = r + 4; },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(r), {"r"}, AG_SOURCE_LOC("logical_expressions.cpp", 14));
// CHECK-NEXT:   Tensor any = ag::or_(x > 0, [&] { return y > 0; }, AG_SOURCE_LOC("logical_expressions.cpp", 15));
// CHECK-NEXT:   bool plain = b && b;
// CHECK-NEXT:   return r + ag::cast(any, ag::int32) + plain;
// CHECK-NEXT: }
