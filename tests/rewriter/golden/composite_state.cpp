// Golden test: what a staged construct carries besides plain tensor locals. A mutating member
// call (`ta.write(i, v);`) makes its object state like an assignment; a struct of tensors is
// carried field by field; a std::array or std::vector of tensors is carried whole (the runtime
// carries each element).
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

#include <array>
#include <vector>

using ag::Tensor;

struct Params {
  Tensor w, b;
};
struct Layer {
  Params params;
  Tensor scale;
};

AG_FUNCTION Tensor squares(Tensor n) {
  ag::TensorArray ta(ag::int32);
  for (Tensor i : ag::range(n)) ta.write(i, i * i);
  return ta.stack();
}

AG_FUNCTION Tensor whole_struct(Tensor x) {
  Layer layer{Params{x, x}, x};
  while (x > 1) {
    layer = Layer{Params{layer.params.w * 2, layer.params.b}, layer.scale + 1};
    x = x / 2;
  }
  return layer.params.w + layer.scale;
}

AG_FUNCTION Tensor containers(Tensor x) {
  std::array<Tensor, 2> ab = {x, x};
  std::vector<Tensor> sums = {x, x, x};
  if (x > 0) {
    ab[0] = ab[1] + 1;
    for (int k = 0; k < 3; ++k) sums[k] = sums[k] * 2;
  }
  return ab[0] + sums[2];
}
// CHECK-LABEL: AG_FUNCTION Tensor squares(Tensor n) {
// CHECK-NEXT:   ag::TensorArray ta(ag::int32);
// CHECK-NEXT:   ag::for_stmt(ag::range(n), ag::no_extra_test,
// CHECK-NEXT:       [&](Tensor i) { ta.write(i, i * i); },
// CHECK-NEXT:       ag::state(ta), {"ta"}, AG_SOURCE_LOC("composite_state.cpp", 24));
// CHECK-NEXT:   return ta.stack();
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor whole_struct(Tensor x) {
// CHECK-NEXT:   Layer layer{Params{x, x}, x};
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return x > 1; },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         layer = Layer{Params{layer.params.w * 2, layer.params.b}, layer.scale + 1};
// CHECK-NEXT:         x = x / 2;
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(layer.params.b, layer.params.w, layer.scale, x),
// CHECK-NEXT:       {"layer.params.b", "layer.params.w", "layer.scale", "x"},
// CHECK-NEXT:       AG_SOURCE_LOC("composite_state.cpp", 30));
// CHECK-NEXT:   return layer.params.w + layer.scale;
// CHECK-NEXT: }
// CHECK-LABEL: AG_FUNCTION Tensor containers(Tensor x) {
// CHECK-NEXT:   std::array<Tensor, 2> ab = {x, x};
// CHECK-NEXT:   std::vector<Tensor> sums = {x, x, x};
// CHECK-NEXT:   ag::if_stmt(x > 0,
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         ab[0] = ab[1] + 1;
// CHECK-NEXT:         for (int k = 0; k < 3; ++k) sums[k] = sums[k] * 2;
// CHECK-NEXT:       },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(ab, sums), {"ab", "sums"}, AG_SOURCE_LOC("composite_state.cpp", 40));
// CHECK-NEXT:   return ab[0] + sums[2];
// CHECK-NEXT: }
