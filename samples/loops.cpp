// Loops (the guide's "AutoGraph transformations" and "Looping over Python data"): a while loop
// on a tensor condition is staged — its body appears once in the graph and the number of
// iterations is decided at run time. A loop over plain C++ data runs while tracing: it unrolls,
// adding a copy of its body to the graph per element. `./run.sh loops` also shows what
// ag-rewrite made of this file (AutoGraph's `to_code`).
#include <ag/ag.h>

#include <utility>
#include <vector>

using ag::Tensor;

// The guide's "simple loop": converted by ag-rewrite into ag::while_stmt.
AG_FUNCTION Tensor tanh_until_small(Tensor x) {
  while (ag::reduce_sum(x) > 1) {
    ag::print(x);
    x = ag::tanh(x);
  }
  return x;
}

// A loop over tensor data: staged, the same graph for any number of elements.
AG_FUNCTION Tensor train_on_tensors(Tensor xs, Tensor ys) {
  Tensor loss = 0;
  for (Tensor i : ag::range(ag::shape_of(xs)[0])) loss += ag::abs(ys[i] - xs[i]);
  return loss;
}

// The number of nodes of a graph, counting the nodes of If/While sub-graphs.
size_t graph_size(const ag::Graph& g) {
  size_t n = g.nodes.size();
  for (const auto& node : g.nodes)
    for (const auto& sub : node.subgraphs) n += graph_size(*sub);
  return n;
}

int main() {
  auto f = ag::function(tanh_until_small, {.name = "f"});
  fmt::print("result: {}\n", f(ag::random_uniform({5}, ag::float32, 0, 1, 3)));
  fmt::print("\nThe graph holds the loop body once:\n{}\n",
             f.get_concrete_function(ag::TensorSpec({5}, ag::float32)).graph_text());

  // Looping over C++ data: `data` is a std::vector, so the for loop is plain C++ and unrolls
  // while tracing: every element adds its own copy of the body to the graph. (A new Function per
  // data set: the vector is captured, not an argument, so it is not part of the signature.)
  std::vector<std::pair<int, int>> data;
  for (size_t n : {3, 10}) {
    data.clear();
    for (int i = 0; i < static_cast<int>(n); ++i) data.emplace_back(i, 2 * i + 1);
    auto train_on_vector = ag::function(
        [&](Tensor w) {
          Tensor loss = 0;
          for (auto [x, y] : data) loss += ag::abs(y - w * x);
          return loss;
        },
        {.name = "train_on_vector"});
    fmt::print("train(a std::vector of {} pairs) contains {} nodes in its graph\n", n,
               graph_size(train_on_vector.get_concrete_function(ag::TensorSpec({}, ag::int32)).graph()));
  }
  auto train = ag::function(train_on_tensors, {.name = "train_on_tensors"});
  for (int n : {3, 10}) {
    Tensor ones = ag::ones({n}, ag::int32);
    fmt::print("train(tensors of {} elements) contains {} nodes in its graph\n", n,
               graph_size(train.get_concrete_function(ag::TensorSpec({-1}, ag::int32), ag::TensorSpec({-1}, ag::int32)).graph()));
    fmt::print("  and computes {}\n", train(ones, ones).item<int>());
  }
  return 0;
}
// OUT: [{{.*}}]
// OUT: result: tf.Tensor(
// OUT: The graph holds the loop body once:
// OUT-NEXT: graph f(
// OUT: While(
// OUT: Print(
// OUT: Tanh(
// OUT: train(a std::vector of 3 pairs) contains [[SMALL:[0-9]+]] nodes in its graph
// OUT-NEXT: train(a std::vector of 10 pairs) contains {{[0-9][0-9]+}} nodes in its graph
// OUT-NEXT: train(tensors of 3 elements) contains [[STAGED:[0-9]+]] nodes in its graph
// OUT-NEXT: and computes 0
// OUT-NEXT: train(tensors of 10 elements) contains [[STAGED]] nodes in its graph
// OUT-NEXT: and computes 0
