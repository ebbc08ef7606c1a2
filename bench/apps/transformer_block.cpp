// A transformer encoder block, inference: pre-layer-norm, 4-head self-attention (scaled dot
// products, softmax), output projection, residual, a GELU (erf) MLP, residual -- on a sequence
// of 128 tokens of width 128, float32, as one AG_FUNCTION. Against the same block by hand with
// Eigen (per-head GEMMs, a row-wise softmax loop), in the same run, 1 thread and 2; and the
// first call.   build/bench/apps/bench_transformer_block
#include <ag/ag.h>

#include <Eigen/Dense>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "bench_util.h"

using ag::Tensor;

constexpr int64_t kSeq = 128, kWidth = 128, kHeads = 4, kHead = kWidth / kHeads, kHidden = 4 * kWidth;

Tensor layer_norm(const Tensor& x, const Tensor& gain) {
  const Tensor mean = ag::reduce_mean(x, {-1}, true);
  const Tensor centered = x - mean;
  const Tensor var = ag::reduce_mean(centered * centered, {-1}, true);
  return centered * ag::rsqrt(var + 1e-5f) * gain;
}

AG_FUNCTION Tensor block(Tensor x, Tensor wqkv, Tensor wo, Tensor w1, Tensor w2, Tensor g1, Tensor g2) {
  const Tensor h = layer_norm(x, g1);
  const Tensor qkv = ag::matmul(h, wqkv);  // [seq, 3 * width]
  // [seq, 3, heads, head] -> [3, heads, seq, head]
  const Tensor heads = ag::transpose(ag::reshape(qkv, {kSeq, 3, kHeads, kHead}), {1, 2, 0, 3});
  const Tensor q = heads[0], k = heads[1], v = heads[2];
  const Tensor scores = ag::matmul(q, k, false, true) * (1.0f / std::sqrt(static_cast<float>(kHead)));
  const Tensor attended = ag::matmul(ag::nn::softmax(scores), v);  // [heads, seq, head]
  const Tensor merged = ag::reshape(ag::transpose(attended, {1, 0, 2}), {kSeq, kWidth});
  const Tensor y = x + ag::matmul(merged, wo);
  return y + ag::matmul(ag::nn::gelu(ag::matmul(layer_norm(y, g2), w1)), w2);
}

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowVec = Eigen::Matrix<float, 1, Eigen::Dynamic>;

Mat layer_norm_eigen(const Mat& x, const RowVec& gain) {
  Mat out(x.rows(), x.cols());
  for (int64_t r = 0; r < x.rows(); ++r) {
    const float mean = x.row(r).mean();
    const RowVec c = x.row(r).array() - mean;
    const float var = c.squaredNorm() / static_cast<float>(x.cols());
    out.row(r) = c.array() * (1.0f / std::sqrt(var + 1e-5f)) * gain.array();
  }
  return out;
}

Mat block_eigen(const Mat& x, const Mat& wqkv, const Mat& wo, const Mat& w1, const Mat& w2, const RowVec& g1, const RowVec& g2) {
  const Mat qkv = layer_norm_eigen(x, g1) * wqkv;
  Mat merged(kSeq, kWidth), scores(kSeq, kSeq);
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHead));
  for (int64_t hd = 0; hd < kHeads; ++hd) {
    const auto q = qkv.middleCols(hd * kHead, kHead), k = qkv.middleCols(kWidth + hd * kHead, kHead),
               v = qkv.middleCols(2 * kWidth + hd * kHead, kHead);
    scores.noalias() = q * k.transpose() * scale;
    for (int64_t r = 0; r < kSeq; ++r) {
      const float m = scores.row(r).maxCoeff();
      scores.row(r) = (scores.row(r).array() - m).exp();
      scores.row(r) /= scores.row(r).sum();
    }
    merged.middleCols(hd * kHead, kHead).noalias() = scores * v;
  }
  Mat y = x;
  y.noalias() += merged * wo;
  Mat hidden = layer_norm_eigen(y, g2) * w1;
  hidden = hidden.unaryExpr([](float t) { return 0.5f * t * (1.0f + std::erf(t * 0.70710678f)); });
  y.noalias() += hidden * w2;
  return y;
}

Mat random_mat(int64_t r, int64_t c, float scale) {
  Mat m(r, c);
  for (int64_t k = 0; k < m.size(); ++k) m.data()[k] = (static_cast<float>(std::rand()) / RAND_MAX - 0.5f) * scale;
  return m;
}
Tensor tensor_of(const Mat& m) { return ag::constant(std::vector<float>(m.data(), m.data() + m.size()), {m.rows(), m.cols()}); }

int main() {
  std::srand(3);
  const Mat x = random_mat(kSeq, kWidth, 2.0f), wqkv = random_mat(kWidth, 3 * kWidth, 0.2f), wo = random_mat(kWidth, kWidth, 0.2f),
            w1 = random_mat(kWidth, kHidden, 0.2f), w2 = random_mat(kHidden, kWidth, 0.1f);
  const RowVec g1 = RowVec::Constant(kWidth, 1.0f), g2 = RowVec::Constant(kWidth, 0.9f);
  const Tensor tx = tensor_of(x), twqkv = tensor_of(wqkv), two = tensor_of(wo), tw1 = tensor_of(w1), tw2 = tensor_of(w2);
  const Tensor tg1 = ag::constant(std::vector<float>(g1.data(), g1.data() + kWidth)),
               tg2 = ag::constant(std::vector<float>(g2.data(), g2.data() + kWidth));

  auto f = ag::function(block);
  Eigen::setNbThreads(1);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(tx, twqkv, two, tw1, tw2, tg1, tg2);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The first call runs at the default thread count (the compile's second module uses the
  // pool's second thread); the run-time comparison below at one thread unless said.
  ag::set_num_threads(1);
  const Mat theirs = block_eigen(x, wqkv, wo, w1, w2, g1, g2);
  float max_diff = 0;
  const std::vector<float> y = ours.to_vector<float>();
  for (int64_t k = 0; k < theirs.size(); ++k) max_diff = std::max(max_diff, std::abs(y[static_cast<size_t>(k)] - theirs.data()[k]));
  if (max_diff > 1e-3f) std::printf("warning: the outputs differ by %g\n", static_cast<double>(max_diff));

  std::vector<agbench::Row> rows;
  auto run_agc = [&] { agbench::keep(f(tx, twqkv, two, tw1, tw2, tg1, tg2)); };
  auto run_eigen = [&] { agbench::keep(block_eigen(x, wqkv, wo, w1, w2, g1, g2)); };
  auto set_threads = [](int threads) {
    ag::set_num_threads(threads);
    Eigen::setNbThreads(threads);
  };
  const std::vector<double> t = agbench::time_interleaved(set_threads, {{run_eigen, 1}, {run_agc, 1}, {run_eigen, 2}, {run_agc, 2}});
  for (int threads : {1, 2}) {
    const double eigen = t[threads == 1 ? 0 : 2], agc = t[threads == 1 ? 1 : 3];
    rows.push_back({fmt::format("block, {} thread{}", threads, threads > 1 ? "s" : ""), agbench::ms(agc), agbench::ms(eigen) + " Eigen",
                    fmt::format("{:.2f}x", agc / eigen), ""});
  }
  rows.push_back({"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""});
  agbench::print_table(fmt::format("Transformer encoder block: {} tokens x {}, {} heads, MLP {}, float32; outputs within {:.1e} of Eigen's",
                                   kSeq, kWidth, kHeads, kHidden, max_diff),
                       rows);
  return 0;
}
