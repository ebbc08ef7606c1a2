// The data and the model of the deploy and data-parallel samples: two interleaved spirals in the
// plane with one-hot labels, and train_mlp's 2-32-32-2 MLP.
#pragma once

#include <ag/ag.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

// `n` points per spiral and one-hot labels, [2n, 2] each; `phase` shifts the points along the
// spirals (0: the training set; another value: new points for serving). Process `rank` of `size`
// keeps the points rank, rank + size, ... of each spiral (an equal share of both classes).
inline std::pair<ag::Tensor, ag::Tensor> two_spirals(int n, float phase = 0.0f, int rank = 0, int size = 1) {
  std::vector<float> xy, onehot;
  for (int label = 0; label < 2; ++label)
    for (int i = rank; i < n; i += size) {
      const float r = 0.15f + 0.85f * (static_cast<float>(i) + phase) / static_cast<float>(n);
      const float a = 2.5f * r * 3.14159265f + (label ? 3.14159265f : 0.0f);
      xy.insert(xy.end(), {r * std::cos(a), r * std::sin(a)});
      onehot.insert(onehot.end(), {label == 0 ? 1.0f : 0.0f, label == 1 ? 1.0f : 0.0f});
    }
  const int64_t rows = static_cast<int64_t>(onehot.size() / 2);
  return {ag::constant(xy, {rows, 2}), ag::constant(onehot, {rows, 2})};
}

// train_mlp's MLP, tanh hidden layers of 32; its weights drawn from `seed` + 1, 2, 3.
struct SpiralMlp {
  explicit SpiralMlp(uint64_t seed = 0)
      : w1(ag::random_normal({2, 32}, ag::float32, 0, 1.0, seed + 1), "w1"), b1(ag::zeros({32}), "b1"),
        w2(ag::random_normal({32, 32}, ag::float32, 0, 0.3, seed + 2), "w2"), b2(ag::zeros({32}), "b2"),
        w3(ag::random_normal({32, 2}, ag::float32, 0, 0.3, seed + 3), "w3"), b3(ag::zeros({2}), "b3") {}

  ag::Tensor logits(const ag::Tensor& p) const {
    const ag::Tensor h1 = ag::tanh(ag::matmul(p, w1) + b1);
    const ag::Tensor h2 = ag::tanh(ag::matmul(h1, w2) + b2);
    return ag::matmul(h2, w3) + b3;
  }
  // The Variables as a tape's sources (tape.gradient(loss, mlp.sources())).
  std::vector<ag::GradSource> sources() const { return {w1, b1, w2, b2, w3, b3}; }
  std::vector<ag::Variable*> variables() { return {&w1, &b1, &w2, &b2, &w3, &b3}; }
  // Each gradient (in sources()'s order) with its variable, as an optimizer applies them.
  std::vector<std::pair<ag::Tensor, ag::Variable*>> with_gradients(const std::vector<ag::Tensor>& g) {
    const std::vector<ag::Variable*> v = variables();
    std::vector<std::pair<ag::Tensor, ag::Variable*>> out;
    for (size_t k = 0; k < v.size(); ++k) out.emplace_back(g[k], v[k]);
    return out;
  }

  ag::Variable w1, b1, w2, b2, w3, b3;
};

// The fraction of rows whose largest probability is the label's.
inline float accuracy(const ag::Tensor& probabilities, const ag::Tensor& labels) {
  return ag::reduce_mean(ag::cast(ag::equal(ag::argmax(probabilities, 1), ag::argmax(labels, 1)), ag::float32)).item<float>();
}
