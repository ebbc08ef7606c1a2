// Golden test of the range-for converter: loops over ag::range and over a tensor become
// ag::for_stmt with the loop variable as the body lambda's parameter; loops over C++ containers
// stay C++ (they unroll while tracing).
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

#include <vector>

AG_FUNCTION Tensor sum_range(Tensor n) {
  Tensor s = 0;
  for (auto i : ag::range(n)) s += i;
  return s;
}

AG_FUNCTION Tensor over_rows(Tensor m, std::vector<Tensor> extra) {
  Tensor total = 0.0f;
  for (const Tensor& row : m) {
    total = total + ag::reduce_sum(row);
  }
  for (const Tensor& e : extra) {
    if (e > 0) total = total + e;
  }
  return total;
}

// CHECK-LABEL: AG_FUNCTION Tensor sum_range(Tensor n) {
// CHECK-NEXT:   Tensor s = 0;
// CHECK-NEXT:   ag::for_stmt(ag::range(n), ag::no_extra_test,
// CHECK-NEXT:       [&](auto i) { s += i; },
// CHECK-NEXT:       ag::state(s), {"s"}, AG_SOURCE_LOC("range_for_statements.cpp", 14));
// CHECK-NEXT:   return s;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor over_rows(Tensor m, std::vector<Tensor> extra) {
// CHECK-NEXT:   Tensor total = 0.0f;
// CHECK-NEXT:   ag::for_stmt(m, ag::no_extra_test,
// CHECK-NEXT:       [&](const Tensor& row) { total = total + ag::reduce_sum(row); },
// CHECK-NEXT:       ag::state(total), {"total"}, AG_SOURCE_LOC("range_for_statements.cpp", 20));
// CHECK-NEXT:   for (const Tensor& e : extra) {
// CHECK-NEXT:     ag::if_stmt(e > 0,
// CHECK-NEXT:         [&] { total = total + e; },
// CHECK-NEXT:         [&] {},
// CHECK-NEXT:         ag::state(total), {"total"}, AG_SOURCE_LOC("range_for_statements.cpp", 24));
// CHECK-NEXT:   }
// CHECK-NEXT:   return total;
// CHECK-NEXT: }
