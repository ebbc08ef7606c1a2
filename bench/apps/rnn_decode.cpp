// An Elman RNN decoding greedily, step by step, as a sequence model's inference loop does:
//   h = tanh(x W + h U + b), logits = h V, the next input is the embedding of argmax(logits)
// for T steps, all in one AG_FUNCTION (a staged loop over tensors). Against the same algorithm
// written by hand with Eigen, in the same run, one thread. Also the first call (trace + compile).
//   build/bench/apps/bench_rnn_decode [steps]
#include <ag/ag.h>

#include <Eigen/Dense>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bench_util.h"
#include "eigen_random.h"

using ag::Tensor;

constexpr int64_t kHidden = 64, kVocab = 32;

// One greedy decode of `steps` tokens from token 0; returns the tokens' sum (a checksum).
AG_FUNCTION Tensor decode(Tensor embed, Tensor w, Tensor u, Tensor b, Tensor v, Tensor steps) {
  Tensor h = ag::zeros({1, kHidden});
  Tensor token = ag::constant(int64_t{0});
  Tensor total = ag::constant(int64_t{0});
  Tensor t = 0;
  while (t < steps) {
    Tensor x = ag::reshape(ag::gather(embed, token), {1, kHidden});
    h = ag::tanh(ag::matmul(x, w) + ag::matmul(h, u) + b);
    token = ag::argmax(ag::reshape(ag::matmul(h, v), {kVocab}), 0);
    total += token;
    t += 1;
  }
  return total;
}

using Mat = agbench::RowMajorMatrix;
using agbench::random_matrix;
using agbench::tensor_of;
using Row = Eigen::Matrix<float, 1, Eigen::Dynamic>;

int64_t decode_eigen(const Mat& embed, const Mat& w, const Mat& u, const Row& b, const Mat& v, int steps) {
  Row h = Row::Zero(kHidden), x(kHidden), logits(kVocab);
  int64_t token = 0, total = 0;
  for (int t = 0; t < steps; ++t) {
    x = embed.row(token);
    h = (x * w + h * u + b).array().tanh().matrix();
    logits.noalias() = h * v;
    Eigen::Index best;
    logits.maxCoeff(&best);
    token = best;
    total += token;
  }
  return total;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  Eigen::setNbThreads(1);
  const Mat embed = random_matrix(kVocab, kHidden, 2.0f, 1), w = random_matrix(kHidden, kHidden, 0.5f, 2),
            u = random_matrix(kHidden, kHidden, 0.5f, 3), v = random_matrix(kHidden, kVocab, 1.0f, 5);
  const Row b = random_matrix(1, kHidden, 0.2f, 4);
  const Tensor args[] = {tensor_of(embed), tensor_of(w), tensor_of(u), tensor_of(b), tensor_of(v)};
  const Tensor n = ag::constant(int32_t{steps});

  auto f = ag::function(decode);
  const auto t0 = std::chrono::steady_clock::now();
  const int64_t ours = f(args[0], args[1], args[2], args[3], args[4], n).item<int64_t>();
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The first call runs at the default thread count (the compile's second module uses the
  // pool's second thread); the run-time comparison below at one thread unless said.
  ag::set_num_threads(1);
  const int64_t theirs = decode_eigen(embed, w, u, b, v, steps);
  if (ours != theirs) std::printf("note: token checksums differ (agc %lld, Eigen %lld): float rounding chose another token\n",
                                  static_cast<long long>(ours), static_cast<long long>(theirs));

  const std::vector<double> t = agbench::time_interleaved(
      ag::set_num_threads, {{[&] { agbench::keep(f(args[0], args[1], args[2], args[3], args[4], n)); }},
                            {[&] { agbench::keep(decode_eigen(embed, w, u, b, v, steps)); }}});
  const double agc = t[0], eigen = t[1];
  agbench::print_table(fmt::format("RNN greedy decode: hidden {}, vocabulary {}, {} steps, one thread", kHidden, kVocab, steps),
                       {{"decode (one call)", agbench::us(agc), agbench::us(eigen) + " Eigen", fmt::format("{:.2f}x", agc / eigen),
                         fmt::format("{:.1f} ns per step", agc / steps * 1e9)},
                        {"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""}});
  return 0;
}
