// Saves the model that tests/aot compiles ahead of time (ag_add_aot_library): a small classifier
// with Variables and a training step (tape, SGD), a staged while with an if (rewritten by
// ag-rewrite), a gather whose bad index compiled code must report, and two results.
//   aot_model_saver <dir>
#include <ag/ag.h>
#include <ag/saved_model.h>

#include <cstdio>
#include <tuple>

using ag::Tensor;

AG_FUNCTION Tensor collatz(Tensor n) {
  Tensor steps = 0;
  while (n > 1) {
    if (n % 2 == 0) n = n / 2;
    else n = 3 * n + 1;
    steps += 1;
  }
  return steps;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: aot_model_saver <dir>\n");
    return 2;
  }
  ag::Variable w1(ag::random_normal({4, 8}, ag::float32, 0, 0.5, 1), "w1"), b1(ag::zeros({8}), "b1");
  ag::Variable w2(ag::random_normal({8, 3}, ag::float32, 0, 0.5, 2), "w2"), b2(ag::zeros({3}), "b2");
  auto logits_of = [&](const Tensor& x) { return ag::matmul(ag::tanh(ag::matmul(x, w1) + b1), w2) + b2; };
  auto predict = ag::function([&](Tensor x) { return ag::nn::softmax(logits_of(x)); }, {.name = "predict"});
  ag::optimizers::SGD sgd(0.1);
  auto train_step = ag::function([&](Tensor x, Tensor labels) {
    ag::GradientTape tape;
    const Tensor loss = ag::reduce_mean(ag::nn::softmax_cross_entropy_with_logits(labels, logits_of(x)));
    const std::vector<Tensor> g = tape.gradient(loss, {w1, b1, w2, b2});
    sgd.apply_gradients({{g[0], &w1}, {g[1], &b1}, {g[2], &w2}, {g[3], &b2}});
    return loss;
  }, {.name = "train_step"});
  // A Function calling another (predict) inside a staged loop: nested, and compiled as one.
  auto refine = ag::function([&](Tensor x, Tensor steps) {
    auto [i, p] = ag::while_loop([&](const Tensor& i, const Tensor&) { return i < steps; },
                                 [&](const Tensor& i, const Tensor& p) {
                                   return std::tuple{i + 1, predict(x + p(ag::all, ag::Slice{0, 1}))};
                                 },
                                 std::tuple{Tensor(0), predict(x)});
    return p;
  }, {.name = "refine"});
  auto lookup = ag::function([](Tensor table, Tensor indices) { return ag::gather(table, indices) * 2.0; }, {.name = "lookup"});
  auto moments = ag::function([](Tensor x) {
    return std::tuple<Tensor, Tensor>{ag::reduce_mean(x), ag::reduce_max(x)};
  }, {.name = "moments"});
  ag::saved_model::save(argv[1], {
      {"predict", predict.get_concrete_function(ag::TensorSpec({-1, 4}, ag::float32))},
      {"train_step", train_step.get_concrete_function(ag::TensorSpec({-1, 4}, ag::float32), ag::TensorSpec({-1, 3}, ag::float32))},
      {"collatz", ag::function(collatz).get_concrete_function(ag::TensorSpec({}, ag::int32))},
      {"refine", refine.get_concrete_function(ag::TensorSpec({-1, 4}, ag::float32), ag::TensorSpec({}, ag::int32))},
      {"lookup", lookup.get_concrete_function(ag::TensorSpec({5}, ag::float64), ag::TensorSpec({-1}, ag::int64))},
      {"moments", moments.get_concrete_function(ag::TensorSpec({-1}, ag::float64))},
  });
  std::printf("saved to %s\n", argv[1]);
  return 0;
}
