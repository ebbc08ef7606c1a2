// Logistic regression trained by full-batch gradient descent, 200 steps in one AG_FUNCTION: each
// step's gradient from a GradientTape inside the staged loop, as a training loop is written.
// Against the same algorithm by hand with Eigen (the gradient X^T (sigmoid(Xw) - y) / N written
// out), in the same run, one thread; and the first call (trace, backward, compile).
//   build/bench/apps/bench_logistic_regression [steps]
#include <ag/ag.h>

#include <Eigen/Dense>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bench_util.h"

using ag::Tensor;

constexpr int64_t kSamples = 4096, kFeatures = 16;
constexpr float kRate = 0.5f;

AG_FUNCTION Tensor train(Tensor x, Tensor y, Tensor w, Tensor steps) {
  Tensor i = 0;
  while (i < steps) {
    ag::GradientTape tape;
    tape.watch(w);
    Tensor z = ag::matmul(x, w);
    // The mean cross-entropy of sigmoid(z) against y, written stably: softplus(z) - y z.
    Tensor loss = ag::reduce_mean(ag::softplus(z) - y * z);
    w = w - kRate * tape.gradient(loss, w);
    i += 1;
  }
  return w;
}

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Mat train_eigen(const Mat& x, const Mat& y, Mat w, int steps) {
  Mat p(kSamples, 1), g(kFeatures, 1);
  for (int s = 0; s < steps; ++s) {
    p.noalias() = x * w;
    p = (1.0f / (1.0f + (-p.array()).exp())).matrix() - y;
    g.noalias() = x.transpose() * p;
    w -= (kRate / static_cast<float>(kSamples)) * g;
  }
  return w;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  Eigen::setNbThreads(1);
  std::srand(11);
  Mat x(kSamples, kFeatures), y(kSamples, 1), w0 = Mat::Zero(kFeatures, 1);
  for (int64_t i = 0; i < x.size(); ++i) x.data()[i] = static_cast<float>(std::rand()) / static_cast<float>(RAND_MAX) - 0.5f;
  for (int64_t r = 0; r < kSamples; ++r) y(r, 0) = x.row(r).sum() > 0 ? 1.0f : 0.0f;  // a separable rule
  const Tensor tx = ag::constant(std::vector<float>(x.data(), x.data() + x.size()), {kSamples, kFeatures});
  const Tensor ty = ag::constant(std::vector<float>(y.data(), y.data() + y.size()), {kSamples, 1});
  const Tensor tw = ag::zeros({kFeatures, 1});
  const Tensor n = ag::constant(int32_t{steps});

  auto f = ag::function(train);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(tx, ty, tw, n);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The first call runs at the default thread count (the compile's second module uses the
  // pool's second thread); the run-time comparison below at one thread unless said.
  ag::set_num_threads(1);
  const Mat theirs = train_eigen(x, y, w0, steps);
  float max_diff = 0;
  const std::vector<float> w = ours.to_vector<float>();
  for (int64_t k = 0; k < kFeatures; ++k) max_diff = std::max(max_diff, std::abs(w[static_cast<size_t>(k)] - theirs(k, 0)));
  if (max_diff > 1e-3f) std::printf("warning: the weights differ from Eigen's by %g\n", static_cast<double>(max_diff));

  auto run_agc = [&] { agbench::keep(f(tx, ty, tw, n)); };
  const std::vector<double> t = agbench::time_interleaved(ag::set_num_threads, {{run_agc, 1}, {[&] { agbench::keep(train_eigen(x, y, w0, steps)); }}, {run_agc, 2}});
  const double agc = t[0], eigen = t[1], agc2 = t[2];
  agbench::print_table(fmt::format("Logistic regression: {} samples x {} features, {} gradient steps", kSamples, kFeatures, steps),
                       {{"train, 1 thread", agbench::ms(agc), agbench::ms(eigen) + " Eigen", fmt::format("{:.2f}x", agc / eigen),
                         fmt::format("{:.1f} us per step; weights within {:.1e} of Eigen's", agc / steps * 1e6, max_diff)},
                        {"train, 2 threads", agbench::ms(agc2), agbench::ms(eigen) + " Eigen", fmt::format("{:.2f}x", agc2 / eigen),
                         "Eigen on 1 thread"},
                        {"first call (trace + backward + compile, default threads)", agbench::ms(first), "", "", ""}});
  return 0;
}
