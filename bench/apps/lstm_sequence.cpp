// An LSTM encoder over a batch of sequences, as a sequence model's inference does:
//   z = x_t W + h U + b; i, f, o = sigmoid(z's quarters), g = tanh(z's third quarter)
//   c = f * c + i * g; h = o * tanh(c)
// for every step t of a [steps, batch, input] tensor, in one AG_FUNCTION (a staged loop that
// picks x_t by gather and cuts the gates by slices). Against the same algorithm written by hand
// with Eigen, in the same run, one thread (agc on 1 and 2); and the first call.
//   build/bench/apps/bench_lstm_sequence [steps]
#include <ag/ag.h>

#include <Eigen/Dense>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"
#include "eigen_random.h"

using ag::Tensor;

constexpr int64_t kBatch = 32, kInput = 64, kHidden = 128, kGates = 4 * kHidden;

// The final hidden state of every sequence: [batch, hidden].
AG_FUNCTION Tensor encode(Tensor xs, Tensor w, Tensor u, Tensor b) {
  Tensor h = ag::zeros({kBatch, kHidden});
  Tensor c = ag::zeros({kBatch, kHidden});
  // The trip count as a tensor, so the loop is staged (one While) rather than unrolled: with
  // `xs.shape()[0]`, a C++ int, the condition would be a constant and the body traced 50 times.
  const Tensor steps = ag::gather(ag::shape_of(xs), 0);
  for (Tensor t = int64_t{0}; t < steps; t += 1) {
    const Tensor z = ag::matmul(ag::gather(xs, t), w) + ag::matmul(h, u) + b;
    const Tensor i = ag::sigmoid(ag::slice(z, {0, 0}, {kBatch, kHidden}));
    const Tensor f = ag::sigmoid(ag::slice(z, {0, kHidden}, {kBatch, kHidden}));
    const Tensor g = ag::tanh(ag::slice(z, {0, 2 * kHidden}, {kBatch, kHidden}));
    const Tensor o = ag::sigmoid(ag::slice(z, {0, 3 * kHidden}, {kBatch, kHidden}));
    c = f * c + i * g;
    h = o * ag::tanh(c);
  }
  return h;
}

using Mat = agbench::RowMajorMatrix;
using agbench::random_matrix;
using agbench::tensor_of;
using Row = Eigen::Matrix<float, 1, Eigen::Dynamic>;

// The same encoder by hand: one product per step into the gates, then the cell update by rows
// of Eigen arrays (sigmoid as 1 / (1 + exp(-x)), vectorized by Eigen).
Mat encode_eigen(const std::vector<float>& xs, int64_t steps, const Mat& w, const Mat& u, const Row& b) {
  Mat h = Mat::Zero(kBatch, kHidden), c = Mat::Zero(kBatch, kHidden), z(kBatch, kGates);
  auto sigmoid = [](const auto& x) { return (1.0f + (-x).exp()).inverse(); };
  for (int64_t t = 0; t < steps; ++t) {
    const Eigen::Map<const Mat> x(xs.data() + t * kBatch * kInput, kBatch, kInput);
    z.noalias() = x * w;
    z.noalias() += h * u;
    z.rowwise() += b;
    const auto zi = z.leftCols(kHidden).array(), zf = z.middleCols(kHidden, kHidden).array();
    const auto zg = z.middleCols(2 * kHidden, kHidden).array(), zo = z.rightCols(kHidden).array();
    c.array() = sigmoid(zf) * c.array() + sigmoid(zi) * zg.tanh();
    h.array() = sigmoid(zo) * c.array().tanh();
  }
  return h;
}

int main(int argc, char** argv) {
  const int64_t steps = argc > 1 ? std::atoll(argv[1]) : 50;
  Eigen::setNbThreads(1);
  const Mat w = random_matrix(kInput, kGates, 0.3f, 1), u = random_matrix(kHidden, kGates, 0.3f, 2);
  const Row b = random_matrix(1, kGates, 0.2f, 3);
  const Mat x = random_matrix(steps * kBatch, kInput, 2.0f, 4);
  const std::vector<float> xs(x.data(), x.data() + x.size());
  const Tensor txs = ag::constant(xs, {steps, kBatch, kInput}), tw = tensor_of(w), tu = tensor_of(u), tb = tensor_of(b);

  auto f = ag::function(encode);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(txs, tw, tu, tb);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ag::set_num_threads(1);
  const Mat theirs = encode_eigen(xs, steps, w, u, b);
  const std::vector<float> got = ours.to_vector<float>();
  float max_diff = 0;
  for (size_t k = 0; k < got.size(); ++k) max_diff = std::max(max_diff, std::abs(got[k] - theirs.data()[k]));

  // The same Function compiled with AG_JIT_PACK_WEIGHTS=0: the GEMM packs W and U again in every
  // step, as Eigen's does (docs/jit.md, "Weights packed before their loop").
  ::setenv("AG_JIT_PACK_WEIGHTS", "0", 1);
  auto repacking = ag::function(encode);
  agbench::keep(repacking(txs, tw, tu, tb));
  ::unsetenv("AG_JIT_PACK_WEIGHTS");

  std::vector<agbench::Row> rows;
  auto run_agc = [&] { agbench::keep(f(txs, tw, tu, tb)); };
  const std::vector<double> t = agbench::time_interleaved(
      ag::set_num_threads, {{[&] { agbench::keep(encode_eigen(xs, steps, w, u, b)); }},
                            {run_agc, 1},
                            {run_agc, 2},
                            {[&] { agbench::keep(repacking(txs, tw, tu, tb)); }, 1}});
  const double eigen = t[0];
  for (int threads : {1, 2}) {
    const double agc = t[static_cast<size_t>(threads)];
    rows.push_back({fmt::format("encode, {} thread{}", threads, threads > 1 ? "s" : ""), agbench::us(agc), agbench::us(eigen) + " Eigen",
                    fmt::format("{:.2f}x", agc / eigen),
                    threads == 1 ? fmt::format("{:.1f} us per step; h within {:.1e} of Eigen's", agc / static_cast<double>(steps) * 1e6, max_diff)
                                 : "Eigen on 1 thread"});
  }
  rows.push_back({"encode, 1 thread, weights packed every step (AG_JIT_PACK_WEIGHTS=0)", agbench::us(t[3]),
                  agbench::us(eigen) + " Eigen", fmt::format("{:.2f}x", t[3] / eigen),
                  fmt::format("packed before the loop: {:.2f}x this", t[1] / t[3])});
  ag::set_num_threads(1);
  rows.push_back({"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""});
  agbench::print_table(fmt::format("LSTM encoder: batch {}, input {}, hidden {}, {} steps, float32", kBatch, kInput, kHidden, steps), rows);
  return 0;
}
