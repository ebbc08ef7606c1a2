// Golden test of the state analysis: members and elements of local aggregates, members of
// *this, globals ("::g"), and non-tensor locals are named in the state list (all live after
// the if: liveness.cpp has the ones that are not).
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

#include <vector>

struct Pair {
  Tensor a, b;
};
Tensor global_total = 0;

struct Model {
  Tensor w;
  AG_FUNCTION Tensor step(Tensor x) {
    if (x > 0) w = w + x;
    return w;
  }
};

AG_FUNCTION Tensor state_kinds(Tensor x) {
  Pair p{x, x};
  Tensor arr[2] = {x, x};
  std::vector<Tensor> history;
  if (x > 0) {
    p.a = p.a + 1;
    arr[1] = arr[1] * 2;
    history.push_back(x);
    global_total = global_total + x;
  }
  return p.a + arr[1] + static_cast<int>(history.size());
}

// CHECK-LABEL: struct Model {
// CHECK-NEXT:   Tensor w;
// CHECK-NEXT:   AG_FUNCTION Tensor step(Tensor x) {
// CHECK-NEXT:     ag::if_stmt(x > 0,
// CHECK-NEXT:         [&] { w = w + x; },
// CHECK-NEXT:         [&] {},
// CHECK-NEXT:         ag::state(this->w), {"this->w"}, AG_SOURCE_LOC("state_variables.cpp", 20));
// CHECK-NEXT:     return w;
// CHECK-NEXT:   }
// CHECK-NEXT: };
// CHECK-LABEL: AG_FUNCTION Tensor state_kinds(Tensor x) {
// CHECK-NEXT:   Pair p{x, x};
// CHECK-NEXT:   Tensor arr[2] = {x, x};
// CHECK-NEXT:   std::vector<Tensor> history;
// CHECK-NEXT:   ag::if_stmt(x > 0,
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         p.a = p.a + 1;
// CHECK-NEXT:         arr[1] = arr[1] * 2;
// CHECK-NEXT:         history.push_back(x);
// CHECK-NEXT:         global_total = global_total + x;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(global_total, arr[1], history, p.a),
// CHECK-NEXT:       {"::global_total", "arr[1]", "history", "p.a"},
// CHECK-NEXT:       AG_SOURCE_LOC("state_variables.cpp", 29));
// CHECK-NEXT:   return p.a + arr[1] + static_cast<int>(history.size());
// CHECK-NEXT: }
