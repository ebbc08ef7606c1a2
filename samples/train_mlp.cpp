// Training a small model end to end: the guide's train_step (forward, backward and the optimizer's
// update in one traced, compiled Function), first a linear model with SGD, then a 2-layer MLP
// with Adam on two interleaved spirals, printing the loss falling and the accuracy.
#include <ag/ag.h>

#include <cmath>
#include <vector>

using ag::Tensor;

// Two spirals of `n` points each in the plane, labels 0 and 1 (one-hot, [2n, 2]).
std::pair<Tensor, Tensor> two_spirals(int n) {
  std::vector<float> xy, onehot;
  for (int label = 0; label < 2; ++label)
    for (int i = 0; i < n; ++i) {
      const float r = 0.15f + 0.85f * static_cast<float>(i) / static_cast<float>(n);
      const float a = 2.5f * r * 3.14159265f + (label ? 3.14159265f : 0.0f);
      xy.insert(xy.end(), {r * std::cos(a), r * std::sin(a)});
      onehot.insert(onehot.end(), {label == 0 ? 1.0f : 0.0f, label == 1 ? 1.0f : 0.0f});
    }
  return {ag::constant(xy, {2 * n, 2}), ag::constant(onehot, {2 * n, 2})};
}

// Mean softmax cross-entropy of logits [b, k] against one-hot labels (tf.nn's, stable for any
// logits).
Tensor cross_entropy(const Tensor& logits, const Tensor& labels) {
  return ag::reduce_mean(ag::nn::softmax_cross_entropy_with_logits(labels, logits));
}

int main() {
  // 1. A linear model y = x w + b with SGD: the loss falls call after call, one trace.
  ag::Variable w(ag::zeros({3, 1}), "w"), b(ag::zeros({1}), "b");
  const Tensor x = ag::random_uniform({64, 3}, ag::float32, -1, 1, 7);
  const Tensor y = ag::matmul(x, ag::constant({{2.0f}, {-1.0f}, {0.5f}})) + 0.25f;
  ag::optimizers::SGD sgd(0.2, 0.9);
  auto linear_step = ag::function([&](Tensor xs, Tensor ys) {
    ag::GradientTape tape;
    const Tensor loss = ag::reduce_mean(ag::square(ag::matmul(xs, w) + b - ys));
    const std::vector<Tensor> g = tape.gradient(loss, {w, b});
    sgd.apply_gradients({{g[0], &w}, {g[1], &b}});
    return loss;
  }, {.name = "linear_step"});
  float first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    last = linear_step(x, y).item<float>();
    if (step == 0) first = last;
  }
  fmt::print("linear model: loss {:.4f} -> {:.6f}, traces: {}, w = {} (fitting 2, -1, 0.5)\n", first, last,
             linear_step.tracing_count(), ag::reshape(w.value(), {3}));

  // 2. A 2-32-2 MLP with Adam on two spirals.
  const auto [points, labels] = two_spirals(100);
  ag::Variable w1(ag::random_normal({2, 32}, ag::float32, 0, 1.0, 1), "w1"), b1(ag::zeros({32}), "b1");
  ag::Variable w2(ag::random_normal({32, 32}, ag::float32, 0, 0.3, 2), "w2"), b2(ag::zeros({32}), "b2");
  ag::Variable w3(ag::random_normal({32, 2}, ag::float32, 0, 0.3, 3), "w3"), b3(ag::zeros({2}), "b3");
  auto logits_of = [&](const Tensor& p) {
    const Tensor h1 = ag::tanh(ag::matmul(p, w1) + b1);
    const Tensor h2 = ag::tanh(ag::matmul(h1, w2) + b2);
    return ag::matmul(h2, w3) + b3;
  };
  ag::optimizers::Adam adam(0.02);
  auto train_step = ag::function([&](Tensor p, Tensor l) {
    ag::GradientTape tape;
    const Tensor loss = cross_entropy(logits_of(p), l);
    const std::vector<Tensor> g = tape.gradient(loss, {w1, b1, w2, b2, w3, b3});
    adam.apply_gradients({{g[0], &w1}, {g[1], &b1}, {g[2], &w2}, {g[3], &b2}, {g[4], &w3}, {g[5], &b3}});
    return loss;
  }, {.name = "train_step"});
  auto accuracy = ag::function([&](Tensor p, Tensor l) {
    return ag::reduce_mean(ag::cast(ag::equal(ag::argmax(logits_of(p), 1), ag::argmax(l, 1)), ag::float32));
  }, {.name = "accuracy"});
  float start_loss = 0, end_loss = 0;
  for (int step = 0; step <= 600; ++step) {
    const float loss = train_step(points, labels).item<float>();
    if (step == 0) start_loss = loss;
    end_loss = loss;
    if (step % 150 == 0)
      fmt::print("step {:>3}: loss {:.4f}, accuracy {:.3f}\n", step, loss, accuracy(points, labels).item<float>());
  }
  const float acc = accuracy(points, labels).item<float>();
  const ag::FunctionStats stats = train_step.stats();
  fmt::print("the loss fell: {}; accuracy above 0.9: {}; train_step traced {} time(s), compiled: {}\n",
             end_loss < start_loss / 4, acc > 0.9f, train_step.tracing_count(), stats.compiles + stats.disk_hits == 1);
  return 0;
}
// OUT: linear model: loss {{[0-9.]+}} -> 0.0
// OUT-SAME: traces: 1
// OUT: step   0: loss
// OUT: step 600: loss
// OUT: the loss fell: true; accuracy above 0.9: true; train_step traced 1 time(s), compiled: true
