// A training epoch as a Keras user writes it in C++: an MLP 784-256(relu)-10 with softmax cross
// entropy, Variables, ag::optimizers::Adam, and a train step compiled once (ag::function) and
// called for each of 64 batches of 64 samples. Against the same epoch written by hand with Eigen
// (forward, backward, Adam as Keras computes it), from the same weights, in the same run, one
// thread (agc on 1 and 2); and the first call (trace + tape backward + compile).
//   build/bench/apps/bench_mlp_adam [batches]
#include <ag/ag.h>

#include <Eigen/Core>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"

using ag::Tensor;

constexpr int64_t kBatch = 64, kIn = 784, kHidden = 256, kClasses = 10;
constexpr float kLr = 1e-3f, kBeta1 = 0.9f, kBeta2 = 0.999f, kEps = 1e-7f;

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Row = Eigen::Matrix<float, 1, Eigen::Dynamic>;

// One parameter with its two Adam moments.
struct Param {
  Mat w, m, v;
  explicit Param(Mat init) : w(std::move(init)), m(Mat::Zero(w.rows(), w.cols())), v(Mat::Zero(w.rows(), w.cols())) {}
  void adam(const Mat& g, float lr_t) {
    m = kBeta1 * m + (1 - kBeta1) * g;
    v = kBeta2 * v + (1 - kBeta2) * g.cwiseProduct(g);
    w.array() -= lr_t * m.array() / (v.array().sqrt() + kEps);
  }
};

struct EigenMlp {
  Param w1, b1, w2, b2;
  int64_t step = 0;
  float train_step(const float* x, const float* y) {
    Eigen::Map<const Mat> X(x, kBatch, kIn), Y(y, kBatch, kClasses);
    const Mat H = ((X * w1.w).rowwise() + Row(b1.w)).cwiseMax(0.0f);
    const Mat Z = (H * w2.w).rowwise() + Row(b2.w);
    const Mat S = Z.colwise() - Z.rowwise().maxCoeff();
    const Mat E = S.array().exp();
    const Eigen::VectorXf denom = E.rowwise().sum();
    const float loss = -(Y.array() * (S.array().colwise() - denom.array().log())).sum() / static_cast<float>(kBatch);
    const Mat dZ = ((E.array().colwise() / denom.array()).matrix() - Y) / static_cast<float>(kBatch);
    const Mat dH = ((dZ * w2.w.transpose()).array() * (H.array() > 0.0f).cast<float>()).matrix();
    ++step;
    const float lr_t = kLr * std::sqrt(1 - std::pow(kBeta2, static_cast<float>(step))) / (1 - std::pow(kBeta1, static_cast<float>(step)));
    w2.adam(H.transpose() * dZ, lr_t);
    b2.adam(dZ.colwise().sum(), lr_t);
    w1.adam(X.transpose() * dH, lr_t);
    b1.adam(dH.colwise().sum(), lr_t);
    return loss;
  }
};

Mat to_mat(const Tensor& t) {
  const std::vector<float> v = t.to_vector<float>();
  const int64_t rows = t.shape().rank() == 2 ? t.shape()[0] : 1, cols = t.shape()[t.shape().rank() - 1];
  return Eigen::Map<const Mat>(v.data(), rows, cols);
}

int main(int argc, char** argv) {
  const int64_t batches = argc > 1 ? std::atoll(argv[1]) : 64;
  // Samples of ten classes: uniform pixels, brighter in a band of the class's own; labels
  // smoothed (0.91 and 0.01): the logits stay finite, as does every gradient. With one-hot labels
  // this easy set saturates the softmax within a few epochs, the gradients become denormal
  // floats and every later epoch (of either program) runs several times slower.
  std::vector<float> xs(static_cast<size_t>(batches * kBatch * kIn)), ys(static_cast<size_t>(batches * kBatch * kClasses), 0.01f);
  for (int64_t s = 0; s < batches * kBatch; ++s) {
    const int64_t label = (s * 7 + s / 13) % kClasses;
    ys[static_cast<size_t>(s * kClasses + label)] = 0.91f;
    for (int64_t p = 0; p < kIn; ++p)
      xs[static_cast<size_t>(s * kIn + p)] = static_cast<float>((s * 7919 + p * 104729) % 1000) / 1000.0f + (p / 78 == label ? 0.5f : 0.0f);
  }
  std::vector<Tensor> bx, by;
  for (int64_t k = 0; k < batches; ++k) {
    bx.push_back(ag::constant(std::vector<float>(xs.begin() + k * kBatch * kIn, xs.begin() + (k + 1) * kBatch * kIn), {kBatch, kIn}));
    by.push_back(ag::constant(std::vector<float>(ys.begin() + k * kBatch * kClasses, ys.begin() + (k + 1) * kBatch * kClasses), {kBatch, kClasses}));
  }
  const Tensor w1_0 = ag::random_normal({kIn, kHidden}, ag::float32, 0, 0.05, 2), w2_0 = ag::random_normal({kHidden, kClasses}, ag::float32, 0, 0.05, 3);

  // agc: Variables, Adam, one compiled train step.
  ag::Variable w1(w1_0, "w1"), b1(ag::zeros({kHidden}), "b1"), w2(w2_0, "w2"), b2(ag::zeros({kClasses}), "b2");
  ag::optimizers::Adam adam(kLr, kBeta1, kBeta2, kEps);
  auto body = [&](Tensor x, Tensor y) {
    ag::GradientTape tape;
    const Tensor logits = ag::matmul(ag::relu(ag::matmul(x, w1) + b1), w2) + b2;
    const Tensor shifted = logits - ag::stop_gradient(ag::reduce_max(logits, 1, true));
    const Tensor loss = -ag::reduce_mean(ag::reduce_sum(y * (shifted - ag::log(ag::reduce_sum(ag::exp(shifted), 1, true))), 1));
    const std::vector<Tensor> g = tape.gradient(loss, {w1, b1, w2, b2});
    adam.apply_gradients({{g[0], &w1}, {g[1], &b1}, {g[2], &w2}, {g[3], &b2}});
    return loss;
  };
  auto step = ag::function(body, {.name = "train_step"});
  const auto t0 = std::chrono::steady_clock::now();
  agbench::keep(step(bx[0], by[0]));
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ag::set_num_threads(1);
  float last_loss = 0;
  for (int64_t k = 1; k < batches; ++k) last_loss = step(bx[static_cast<size_t>(k)], by[static_cast<size_t>(k)]).item<float>();

  // The same epoch by hand, from the same weights; then both compared.
  EigenMlp eigen{Param(to_mat(w1_0)), Param(Mat::Zero(1, kHidden)), Param(to_mat(w2_0)), Param(Mat::Zero(1, kClasses))};
  float eigen_loss = 0;
  for (int64_t k = 0; k < batches; ++k)
    eigen_loss = eigen.train_step(&xs[static_cast<size_t>(k * kBatch * kIn)], &ys[static_cast<size_t>(k * kBatch * kClasses)]);
  const float weight_diff = (to_mat(w1.value()) - eigen.w1.w).cwiseAbs().maxCoeff();
  if (std::abs(last_loss - eigen_loss) > 1e-3f * std::max(1.0f, std::abs(eigen_loss)) || weight_diff > 1e-3f)
    std::printf("warning: after an epoch the losses are %g and %g, w1 differs by %g\n", static_cast<double>(last_loss),
                static_cast<double>(eigen_loss), static_cast<double>(weight_diff));

  // Both programs train on in lockstep, epoch by epoch from the same state, and each row takes
  // the fastest of its epochs: Adam's moments of units that stop learning (dead ReLUs) decay
  // geometrically into denormal floats after some 600 steps, and from then on every epoch of
  // either program runs several times slower (measured: 55 -> 210 ms by epoch 11).
  auto agc_epoch = [&] {
    for (int64_t k = 0; k < batches; ++k) agbench::keep(step(bx[static_cast<size_t>(k)], by[static_cast<size_t>(k)]));
  };
  auto eigen_epoch = [&] {
    for (int64_t k = 0; k < batches; ++k)
      agbench::keep(eigen.train_step(&xs[static_cast<size_t>(k * kBatch * kIn)], &ys[static_cast<size_t>(k * kBatch * kClasses)]));
  };
  auto seconds = [](auto&& f) {
    const auto s0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
  };
  std::vector<agbench::Row> rows;
  double by_hand = 1e300;
  for (int threads : {1, 2}) {
    ag::set_num_threads(threads);
    double agc = 1e300;
    for (int e = 0; e < 3; ++e) {
      agc = std::min(agc, seconds(agc_epoch));
      by_hand = std::min(by_hand, seconds(eigen_epoch));
    }
    rows.push_back({fmt::format("epoch of {} steps, {} thread{}", batches, threads, threads > 1 ? "s" : ""), agbench::ms(agc),
                    agbench::ms(by_hand) + " Eigen", fmt::format("{:.2f}x", agc / by_hand),
                    threads == 1 ? fmt::format("{:.1f} us per step; loss {:.4f} (Eigen {:.4f}), w1 within {:.1e}", agc / static_cast<double>(batches) * 1e6,
                                               last_loss, eigen_loss, weight_diff)
                                 : "Eigen on 1 thread"});
  }
  ag::set_num_threads(1);
  rows.push_back({"first call (trace + backward + compile, default threads)", agbench::ms(first), "", "", ""});
  agbench::print_table(fmt::format("MLP {}-{}-{} trained with Adam, batches of {}, float32", kIn, kHidden, kClasses, kBatch), rows);
  return 0;
}
