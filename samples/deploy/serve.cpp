// Deploying, part 2 of 3: a program that never saw the model's source loads it and serves it on
// the JIT, and trains it further.
//   deploy_serve <model dir> [--predict-only]   (the second: load, predict, exit; bench/deploy times it)
#include <ag/ag.h>
#include <ag/saved_model.h>

#include "spirals.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    fmt::print(stderr, "usage: deploy_serve <model dir> [--predict-only]\n");
    return 2;
  }
  const ag::saved_model::Module model = ag::saved_model::load(argv[1]);
  if (argc > 2) return model.call("predict", {two_spirals(50, 0.5f).first})[0].shape()[0] == 100 ? 0 : 1;
  for (const ag::saved_model::Signature& s : model.signatures()) fmt::print("signature {}: {}\n", s.name, s.text);
  const auto [points, labels] = two_spirals(50, 0.5f);  // points it was not trained on
  const ag::Tensor probabilities = model.call("predict", {points})[0];
  fmt::print("served {} new points on the JIT: accuracy {:.3f}\n", points.shape()[0], accuracy(probabilities, labels));
  const auto [train_points, train_labels] = two_spirals(100);
  const float loss = model.call("train_step", {train_points, train_labels})[0].item<float>();
  fmt::print("one more train step on the loaded Variables: loss {:.4f}\n", loss);
  fmt::print("accuracy above 0.9: {}\n", accuracy(probabilities, labels) > 0.9f);
  return 0;
}
// OUT: signature predict: {{.*}}float32
// OUT: served 100 new points on the JIT: accuracy
// OUT: one more train step on the loaded Variables: loss
// OUT: accuracy above 0.9: true
