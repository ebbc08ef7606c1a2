// Golden test of templates and lambdas: a template is converted once (its dependent
// conditions go through the operators, which resolve at instantiation); lambdas defined in a
// converted function are converted with it.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

using ag::Tensor;

template <class T>
AG_FUNCTION T twice_if_positive(T x) {
  if (x > 0) x = x * 2;
  return x;
}

AG_FUNCTION Tensor with_lambdas(Tensor x) {
  auto relu = [](Tensor v) -> Tensor {
    if (v < 0) return v * 0;
    return v;
  };
  return relu(x) + twice_if_positive(x) + twice_if_positive(1.0f);
}

// CHECK-LABEL: template <class T>
// CHECK-NEXT: AG_FUNCTION T twice_if_positive(T x) {
// CHECK-NEXT:   ag::if_stmt(x > 0,
// CHECK-NEXT:       [&] { x = x * 2; },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(x), {"x"}, AG_SOURCE_LOC("templates_and_lambdas.cpp", 12));
// CHECK-NEXT:   return x;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor with_lambdas(Tensor x) {
// CHECK-NEXT:   auto relu = [](Tensor v) -> Tensor {
// CHECK-NEXT:     ag::Tensor ag__retval;
// CHECK-NEXT:     ag::Tensor ag__do_return = false;
// CHECK-NEXT:     ag::if_stmt(v < 0,
// CHECK-NEXT:         [&] {
// CHECK-NEXT:           ag__retval = v * 0;
// CHECK-NEXT:           ag__do_return = true;
// CHECK-NEXT:         },
// CHECK-NEXT:         [&] {},
// CHECK-NEXT:         ag::state(ag__do_return, ag__retval),
// CHECK-NEXT:         {"ag__do_return", "ag__retval"},
// CHECK-NEXT:         AG_SOURCE_LOC("templates_and_lambdas.cpp", 18));
// CHECK-NEXT:     ag::if_stmt(ag::not_(ag__do_return),
// CHECK-NEXT:         [&] {
// CHECK-NEXT:           ag__retval = v;
// CHECK-NEXT:           ag__do_return = true;
// CHECK-NEXT:         },
// CHECK-NEXT:         [&] {},
// CHECK-NEXT:         ag::state(ag__do_return, ag__retval),
// CHECK-NEXT:         {"ag__do_return", "ag__retval"},
// CHECK-NEXT:         AG_SOURCE_LOC("templates_and_lambdas.cpp", 19));
// CHECK-NEXT:     return ag__retval;
// CHECK-NEXT:   };
// CHECK-NEXT:   return relu(x) + twice_if_positive(x) + twice_if_positive(1.0f);
// CHECK-NEXT: }
