// Golden test of the return converter: with a return inside a staged construct, every return
// sets ag__retval and ag__do_return, loops stop on the flag, later statements are guarded, and
// the function ends with `return ag__retval;`. Tuple returns get one value per element.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

#include <tuple>

AG_FUNCTION Tensor early(Tensor x) {
  if (x > 0) return x * 2;
  return -x;
}

AG_FUNCTION Tensor find(Tensor v, Tensor target) {
  for (auto i : ag::range(ag::shape_of(v)[0])) {
    if (v[i] == target) return i;
  }
  return Tensor(int64_t{-1});
}

AG_FUNCTION std::tuple<Tensor, Tensor> ordered(Tensor a, Tensor b) {
  if (a > b) return {b, a};
  return std::tuple{a, b};
}

Tensor counter = 0;

AG_FUNCTION void bump_if_positive(Tensor x) {
  if (x < 0) return;
  counter = counter + x;
}

// CHECK-LABEL: AG_FUNCTION Tensor early(Tensor x) {
// CHECK-NEXT:   ag::Tensor ag__retval;
// CHECK-NEXT:   ag::Tensor ag__do_return = false;
// CHECK-NEXT:   ag::if_stmt(x > 0,
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         ag__retval = x * 2;
// CHECK-NEXT:         ag__do_return = true;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(ag__do_return, ag__retval),
// CHECK-NEXT:       {"ag__do_return", "ag__retval"},
// CHECK-NEXT:       AG_SOURCE_LOC("return_statements.cpp", 13));
// CHECK-NEXT:   ag::if_stmt(ag::not_(ag__do_return),
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         ag__retval = -x;
// CHECK-NEXT:         ag__do_return = true;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(ag__do_return, ag__retval),
// CHECK-NEXT:       {"ag__do_return", "ag__retval"},
// CHECK-NEXT:       AG_SOURCE_LOC("return_statements.cpp", 14));
// CHECK-NEXT:   return ag__retval;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor find(Tensor v, Tensor target) {
// CHECK-NEXT:   ag::Tensor ag__retval;
// CHECK-NEXT:   ag::Tensor ag__do_return = false;
// CHECK-NEXT:   ag::for_stmt(ag::range(ag::shape_of(v)[0]), [&] { return ag::not_(ag__do_return); },
// CHECK-NEXT:       [&](auto i) {
// CHECK-NEXT:         ag::if_stmt(v[i] == target,
// CHECK-NEXT:             [&] {
// CHECK-NEXT:               ag__retval = i;
// CHECK-NEXT:               ag__do_return = true;
// CHECK-NEXT:             },
// CHECK-NEXT:             [&] {},
// CHECK-NEXT:             ag::state(ag__do_return, ag__retval),
// CHECK-NEXT:             {"ag__do_return", "ag__retval"},
// CHECK-NEXT:             AG_SOURCE_LOC("return_statements.cpp", 19));
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(ag__do_return, ag__retval),
// CHECK-NEXT:       {"ag__do_return", "ag__retval"},
// CHECK-NEXT:       AG_SOURCE_LOC("return_statements.cpp", 18));
// CHECK-NEXT:   ag::if_stmt(ag::not_(ag__do_return),
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         ag__retval = Tensor(int64_t{-1});
// CHECK-NEXT:         ag__do_return = true;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(ag__do_return, ag__retval),
// CHECK-NEXT:       {"ag__do_return", "ag__retval"},
// CHECK-NEXT:       AG_SOURCE_LOC("return_statements.cpp", 21));
// CHECK-NEXT:   return ag__retval;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION std::tuple<Tensor, Tensor> ordered(Tensor a, Tensor b) {
// CHECK-NEXT:   ag::Tensor ag__retval_0;
// CHECK-NEXT:   ag::Tensor ag__retval_1;
// CHECK-NEXT:   ag::Tensor ag__do_return = false;
// CHECK-NEXT:   ag::if_stmt(a > b,
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         std::tie(ag__retval_0, ag__retval_1) = std::tuple<Tensor, Tensor>{b, a};
// CHECK-NEXT:         ag__do_return = true;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(ag__do_return, ag__retval_0, ag__retval_1),
// CHECK-NEXT:       {"ag__do_return", "ag__retval_0", "ag__retval_1"},
// CHECK-NEXT:       AG_SOURCE_LOC("return_statements.cpp", 25));
// CHECK-NEXT:   ag::if_stmt(ag::not_(ag__do_return),
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         std::tie(ag__retval_0, ag__retval_1) = std::tuple<Tensor, Tensor>(std::tuple{a, b});
// CHECK-NEXT:         ag__do_return = true;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(ag__do_return, ag__retval_0, ag__retval_1),
// CHECK-NEXT:       {"ag__do_return", "ag__retval_0", "ag__retval_1"},
// CHECK-NEXT:       AG_SOURCE_LOC("return_statements.cpp", 26));
// CHECK-NEXT:   return std::tuple<Tensor, Tensor>{ag__retval_0, ag__retval_1};
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION void bump_if_positive(Tensor x) {
// CHECK-NEXT:   ag::Tensor ag__do_return = false;
// CHECK-NEXT:   ag::if_stmt(x < 0,
// CHECK-NEXT:       [&] { ag__do_return = true; },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(ag__do_return), {"ag__do_return"}, AG_SOURCE_LOC("return_statements.cpp", 32));
// CHECK-NEXT:   ag::if_stmt(ag::not_(ag__do_return),
// CHECK-NEXT:       [&] { counter = counter + x; },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(counter), {"::counter"}, AG_SOURCE_LOC("return_statements.cpp", 33));
// CHECK-NEXT: }
