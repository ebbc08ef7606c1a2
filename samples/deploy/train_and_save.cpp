// Deploying, part 1 of 3: train a model with a staged train step, then save what serving needs
// -- `predict` for any batch size, and the train step to keep training -- with the Variables'
// trained values and the machine code of both for two CPU levels, which a loading program links
// instead of compiling.   deploy_train <model dir> [--without-code]
#include <ag/ag.h>
#include <ag/saved_model.h>

#include "spirals.h"

using ag::Tensor;

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: deploy_train <model dir> [--without-code]\n");
    return 2;
  }
  const bool with_code = argc == 2;
  const auto [points, labels] = two_spirals(100);
  SpiralMlp mlp;
  ag::optimizers::Adam adam(0.02);
  auto train_step = ag::function([&](Tensor p, Tensor l) {
    ag::GradientTape tape;
    const Tensor loss = ag::reduce_mean(ag::nn::softmax_cross_entropy_with_logits(l, mlp.logits(p)));
    adam.apply_gradients(mlp.with_gradients(tape.gradient(loss, mlp.sources())));
    return loss;
  }, {.name = "train_step"});
  auto predict = ag::function([&](Tensor p) { return ag::nn::softmax(mlp.logits(p)); }, {.name = "predict"});

  float loss = 0;
  for (int step = 0; step <= 600; ++step) loss = train_step(points, labels).item<float>();
  fmt::print("trained: loss {:.4f}, accuracy on the training points {:.3f}\n", loss, accuracy(predict(points), labels));

  // Unknown batch dims: the loaded signatures take any number of points.
  ag::saved_model::save(argv[1],
                        {
                            {"predict", predict.get_concrete_function(ag::TensorSpec({-1, 2}, ag::float32))},
                            {"train_step", train_step.get_concrete_function(ag::TensorSpec({-1, 2}, ag::float32),
                                                                            ag::TensorSpec({-1, 2}, ag::float32))},
                        },
                        {.compiled_for = with_code ? std::vector<std::string>{"x86-64-v3", "x86-64-v2"} : std::vector<std::string>{}});
  fmt::print("saved predict and train_step to {}{}\n", argv[1], with_code ? ", with their code for x86-64-v3 and x86-64-v2" : "");
  return 0;
}
// OUT: trained: loss
// OUT: saved predict and train_step to
