// A simple computation traced into a graph: matmul + add + relu (the guide's "simple_function").
// Prints the concrete function's signature and graph, and writes the graph as Graphviz DOT
// (rendered to PNG when Graphviz's `dot` is installed).
#include <ag/ag.h>

#include <cstdlib>
#include <fstream>

ag::Tensor simple_function(ag::Tensor x, ag::Tensor w, ag::Tensor b) {
  ag::Tensor y = ag::matmul(x, w);
  return ag::relu(y + b);
}

int main(int argc, char** argv) {
  auto f = ag::function(simple_function, {.name = "simple_function"});
  ag::Tensor x = ag::constant({{1.f, 2.f}});
  ag::Tensor w = ag::constant({{2.f, -3.f}, {1.f, 0.5f}});
  ag::Tensor b = ag::constant({4.f, 1.f});
  fmt::print("simple_function(x, w, b) = {}\n\n", f(x, w, b));

  auto concrete = f.get_concrete_function(x, w, b);
  fmt::print("Signature:\n  {}\n\n", concrete.signature());
  fmt::print("Graph (placeholders, MatMul, Add, Relu, return):\n{}\n", concrete.graph_text());

  const std::string dot_path = argc > 1 ? argv[1] : "simple_function.dot";
  if (!(std::ofstream(dot_path) << concrete.graph_dot())) {
    fmt::print(stderr, "cannot write {}\n", dot_path);
    return 1;
  }
  fmt::print("Wrote the graph as Graphviz DOT to {}\n", dot_path);
  const std::string png_path = dot_path.substr(0, dot_path.rfind('.')) + ".png";
  if (std::system("command -v dot >/dev/null 2>&1") == 0 &&
      std::system(fmt::format("dot -Tpng '{}' -o '{}'", dot_path, png_path).c_str()) == 0)
    fmt::print("and rendered it with Graphviz to {}\n", png_path);
  else
    fmt::print("(install Graphviz to render it: dot -Tpng {} -o {})\n", dot_path, png_path);
  return 0;
}
// OUT: simple_function(x, w, b) = tf.Tensor({{\[\[}}8. 0.{{\]\]}}, shape=(1, 2), dtype=float32)
// OUT: Signature:
// OUT-NEXT: simple_function(arg0: TensorSpec(shape=(1, 2), dtype=float32), arg1: TensorSpec(shape=(2, 2), dtype=float32), arg2: TensorSpec(shape=(2,), dtype=float32)) -> TensorSpec(shape=(1, 2), dtype=float32)
// OUT: graph simple_function(%0: f32[1,2], %1: f32[2,2], %2: f32[2]) -> (f32[1,2]) {
// OUT-NEXT: %3 = MatMul(%0, %1) : f32[1,2]
// OUT-NEXT: %4 = Add(%3, %2) : f32[1,2]
// OUT-NEXT: %5 = Relu(%4) : f32[1,2]
// OUT-NEXT: return %5
// OUT: Wrote the graph as Graphviz DOT to
