// Lists and tuples of tensors as arguments (the guide's rules of tracing: "for ordered
// containers such as list and tuple, the type is parameterized by the types of their
// elements"). A model's weights passed as a std::vector<ag::Tensor> trace once per number of
// weights and each weight's dtype and shape; new values reuse the trace. A std::array<ag::Tensor,
// N> is a tuple of N tensors: an input_signature gives it N specs. A std::vector has no fixed
// length, so a Function with one cannot have an input_signature. (Variables stay Variable&
// parameters: a container of them does not compile.)
#include <ag/ag.h>

using ag::Tensor;

// A multi-layer perceptron; weights = {w0, b0, w1, b1, ...}. The loop over the vector is plain
// C++: it runs while tracing, one dense layer per pair of weights.
Tensor mlp(Tensor x, const std::vector<Tensor>& weights) {
  Tensor h = x;
  for (size_t k = 0; k + 1 < weights.size(); k += 2) {
    h = ag::matmul(h, weights[k]) + weights[k + 1];
    if (k + 2 < weights.size()) h = ag::relu(h);
  }
  return h;
}

int main() {
  auto model = ag::function(mlp, {.name = "mlp"});
  const Tensor x = ag::constant({{1.f, 2.f}});
  std::vector<Tensor> two_layers = {ag::ones({2, 3}), ag::zeros({3}), ag::ones({3, 1}), ag::constant({0.5f})};
  fmt::print("two layers: {}\n", model(x, two_layers));
  two_layers[0] = ag::fill({2, 3}, 2.f);  // new values, same shapes: no new trace
  fmt::print("new weights: {}\n", model(x, two_layers));
  const std::vector<Tensor> one_layer = {ag::ones({2, 1}), ag::zeros({1})};
  fmt::print("one layer: {}\n", model(x, one_layer));
  fmt::print("mlp traced {} times:\n{}", model.tracing_count(), model.pretty_printed_concrete_signatures());

  // A std::array of tensors takes N specs of an input_signature: one trace for every batch size.
  auto dense = ag::function(
      [](Tensor x, std::array<Tensor, 2> layer) { return ag::relu(ag::matmul(x, layer[0]) + layer[1]); },
      {.input_signature = {ag::TensorSpec({-1, 2}, ag::float32, "x"), ag::TensorSpec({2, 3}, ag::float32),
                           ag::TensorSpec({3}, ag::float32)},
       .name = "dense"});
  const std::array<Tensor, 2> layer = {ag::ones({2, 3}), ag::constant({-1.f, 0.f, 1.f})};
  fmt::print("\ndense, batch of 1: {}\n", dense(ag::ones({1, 2}), layer));
  fmt::print("dense, batch of 3: shape {}\n", dense(ag::ones({3, 2}), layer).shape().tf_str());
  fmt::print("dense traced {} time: {}\n", dense.tracing_count(), dense.concrete_functions()[0].signature());

  // get_concrete_function takes a std::vector<ag::TensorSpec> for a vector of tensors.
  const auto wide = model.get_concrete_function(
      ag::TensorSpec({-1, 2}, ag::float32),
      std::vector<ag::TensorSpec>{ag::TensorSpec({2, -1}, ag::float32), ag::TensorSpec({-1}, ag::float32)});
  fmt::print("\n{}\n", wide.signature());

  try {
    ag::function(mlp, {.input_signature = {ag::TensorSpec({-1, 2}, ag::float32)}, .name = "mlp"});
  } catch (const ag::ValueError& e) {
    fmt::print("\nValueError: {}\n", e.what());
  }
  return 0;
}
// OUT: two layers: tf.Tensor({{\[\[}}9.5]], shape=(1, 1), dtype=float32)
// OUT-NEXT: new weights: tf.Tensor({{\[\[}}18.5]], shape=(1, 1), dtype=float32)
// OUT-NEXT: one layer: tf.Tensor({{\[\[}}3.]], shape=(1, 1), dtype=float32)
// OUT-NEXT: mlp traced 2 times:
// OUT-NEXT: mlp(arg0: TensorSpec(shape=(1, 2), dtype=float32), arg1: [TensorSpec(shape=(2, 3), dtype=float32), TensorSpec(shape=(3,), dtype=float32), TensorSpec(shape=(3, 1), dtype=float32), TensorSpec(shape=(1,), dtype=float32)]) -> TensorSpec(shape=(1, 1), dtype=float32)
// OUT-NEXT: mlp(arg0: TensorSpec(shape=(1, 2), dtype=float32), arg1: [TensorSpec(shape=(2, 1), dtype=float32), TensorSpec(shape=(1,), dtype=float32)]) -> TensorSpec(shape=(1, 1), dtype=float32)
// OUT: dense, batch of 1: tf.Tensor({{\[\[}}1. 2. 3.]], shape=(1, 3), dtype=float32)
// OUT-NEXT: dense, batch of 3: shape (3, 3)
// OUT-NEXT: dense traced 1 time: dense(x: TensorSpec(shape=(None, 2), dtype=float32), arg1: [TensorSpec(shape=(2, 3), dtype=float32), TensorSpec(shape=(3,), dtype=float32)]) -> TensorSpec(shape=(None, 3), dtype=float32)
// OUT: mlp(arg0: TensorSpec(shape=(None, 2), dtype=float32), arg1: [TensorSpec(shape=(2, None), dtype=float32), TensorSpec(shape=(None,), dtype=float32)]) -> TensorSpec(shape=(None, None), dtype=float32)
// OUT: ValueError: ag::function 'mlp': parameter 1 is a std::vector<ag::Tensor>, which an input_signature cannot describe
