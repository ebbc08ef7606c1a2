// Every op that a rewritten function records carries the line it was written on in the
// original source (std::source_location, through the #line directives ag-rewrite emits), also
// for code that the rewrite moves into lambdas: branches and loop bodies written on the line
// of their `if` / `while`, an `else` on the next line, macro uses, nested constructs. The
// program prints the traced graphs; FileCheck matches each op's `# source_lines.cpp:N` with
// the line the CHECK names (relative to the CHECK's own line).
#include <ag/ag.h>
#include <fmt/format.h>

using ag::Tensor;

#define SCALE 3
#define LIMIT 7

AG_FUNCTION Tensor single_line_branches(Tensor x) {
  Tensor y = x;
  if (x > 0) y = x * 3;
  else y = x - 4;
  return y;
}
// CHECK-LABEL: single_line_branches
// CHECK: Greater({{.*}}# source_lines.cpp:[[@LINE-5]]{{$}}
// CHECK: Mul({{.*}}# source_lines.cpp:[[@LINE-6]]{{$}}
// CHECK: Sub({{.*}}# source_lines.cpp:[[@LINE-6]]{{$}}

AG_FUNCTION Tensor loop_bodies(Tensor x) {
  while (x < 100) x = x * SCALE;
  do x = x - 1; while (x > LIMIT + 50);
  while (x < 200) { x = x + SCALE; }
  return x;
}
// CHECK-LABEL: loop_bodies
// CHECK: Less({{.*}}# source_lines.cpp:[[@LINE-6]]{{$}}
// CHECK: Mul({{.*}}# source_lines.cpp:[[@LINE-7]]{{$}}
// CHECK: Sub({{.*}}# source_lines.cpp:[[@LINE-7]]{{$}}
// CHECK: Greater({{.*}}# source_lines.cpp:[[@LINE-8]]{{$}}
// CHECK: Less({{.*}}# source_lines.cpp:[[@LINE-8]]{{$}}
// CHECK: Add({{.*}}# source_lines.cpp:[[@LINE-9]]{{$}}

AG_FUNCTION Tensor nested(Tensor n) {
  Tensor total = 0;
  for (auto i : ag::range(n)) {
    if (i % 2 == 0) total = total + i;
    else total = total - i;
  }
  Tensor positive = n > 0 && total > LIMIT;
  return ag::where(positive, total, -total);
}
// CHECK-LABEL: nested
// CHECK: Equal({{.*}}# source_lines.cpp:[[@LINE-7]]{{$}}
// CHECK: Add({{.*}}# source_lines.cpp:[[@LINE-8]]{{$}}
// CHECK: Sub({{.*}}# source_lines.cpp:[[@LINE-8]]{{$}}
// CHECK: Greater({{.*}}# source_lines.cpp:[[@LINE-7]]{{$}}
// CHECK: Greater({{.*}}# source_lines.cpp:[[@LINE-8]]{{$}}

// A function of straight-line code is registered too: its signature names it and its
// parameters (not function@source_lines.cpp:N(arg0: ...)).
AG_FUNCTION Tensor straight_line(Tensor x, Tensor shift) { return x * 2.0f + shift; }
// CHECK-LABEL: straight_line
// CHECK-NEXT: straight_line(x: TensorSpec(shape=(), dtype=float32), shift: TensorSpec(shape=(), dtype=float32))
// CHECK: Mul({{.*}}# source_lines.cpp:[[@LINE-3]]{{$}}

int main() {
  fmt::print("single_line_branches\n{}", ag::function(single_line_branches).get_concrete_function(Tensor(1.0f)).graph_text());
  fmt::print("loop_bodies\n{}", ag::function(loop_bodies).get_concrete_function(Tensor(1)).graph_text());
  fmt::print("nested\n{}", ag::function(nested).get_concrete_function(Tensor(5)).graph_text());
  fmt::print("straight_line\n{}\n{}", ag::function(straight_line).get_concrete_function(Tensor(1.0f), Tensor(2.0f)).signature(),
             ag::function(straight_line).get_concrete_function(Tensor(1.0f), Tensor(2.0f)).graph_text());
  return 0;
}
