// The data of the deploy sample: two interleaved spirals in the plane (train_mlp's), labels one-hot.
#pragma once

#include <ag/ag.h>

#include <cmath>
#include <utility>
#include <vector>

// `n` points per spiral, [2n, 2], and one-hot labels [2n, 2]; `phase` shifts the points along the
// spirals (0: the training set; another value: new points for serving).
inline std::pair<ag::Tensor, ag::Tensor> two_spirals(int n, float phase = 0.0f) {
  std::vector<float> xy, onehot;
  for (int label = 0; label < 2; ++label)
    for (int i = 0; i < n; ++i) {
      const float r = 0.15f + 0.85f * (static_cast<float>(i) + phase) / static_cast<float>(n);
      const float a = 2.5f * r * 3.14159265f + (label ? 3.14159265f : 0.0f);
      xy.insert(xy.end(), {r * std::cos(a), r * std::sin(a)});
      onehot.insert(onehot.end(), {label == 0 ? 1.0f : 0.0f, label == 1 ? 1.0f : 0.0f});
    }
  return {ag::constant(xy, {2 * n, 2}), ag::constant(onehot, {2 * n, 2})};
}

// The fraction of rows whose largest probability is the label's.
inline float accuracy(const ag::Tensor& probabilities, const ag::Tensor& labels) {
  return ag::reduce_mean(ag::cast(ag::equal(ag::argmax(probabilities, 1), ag::argmax(labels, 1)), ag::float32)).item<float>();
}
