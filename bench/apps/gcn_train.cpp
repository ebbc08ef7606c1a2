// A graph convolutional network's training step, as a graph-learning user writes it: node
// features projected (X W1), each edge's source row gathered, scaled by the edge's
// normalization and summed into its target (a segment sum), ReLU, a linear read-out, a squared
// error; the tape's gradients (the gather's gradient is a segment sum, the segment sum's a
// gather) and an SGD update of two Variables, one compiled step (ag::function) called 20 times.
// 20k nodes, 200k edges, 32 features, 16 hidden units. Against the same step by hand (Eigen for
// the products, loops over the edges forward and backward), from the same weights, same run.
//   build/bench/apps/bench_gcn_train [nodes] [edges]
#include <ag/ag.h>

#include <Eigen/Core>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"

using ag::Tensor;

constexpr int64_t kFeatures = 32, kHidden = 16;
constexpr float kLr = 0.05f;
constexpr int kSteps = 20;

using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// The same step by hand: forward, backward through the aggregation (dXW[src] += norm * dZ[dst]),
// SGD; returns the loss.
struct ByHand {
  const Mat& x;
  const std::vector<int32_t>& src;
  const std::vector<int32_t>& dst;
  const std::vector<float>& norm;
  const Mat& y;
  Mat w1, w2;

  // to[into[e]] += norm[e] * from[out_of[e]], rows of kHidden floats (a constant: vectorized).
  void scatter_rows(float* __restrict to, const float* __restrict from, const std::vector<int32_t>& into,
                    const std::vector<int32_t>& out_of) const {
    const float* __restrict w = norm.data();
    for (size_t e = 0; e < into.size(); ++e) {
      float* __restrict t = to + static_cast<int64_t>(into[e]) * kHidden;
      const float* __restrict f = from + static_cast<int64_t>(out_of[e]) * kHidden;
      const float we = w[e];
      for (int64_t j = 0; j < kHidden; ++j) t[j] += we * f[j];
    }
  }

  float step() {
    const int64_t nodes = x.rows();
    // Workspaces kept across steps (fresh matrices every step page-faulted 20 ms a step here).
    xw.noalias() = x * w1;
    z.setZero(nodes, kHidden);
    scatter_rows(z.data(), xw.data(), dst, src);
    h = z.cwiseMax(0.0f);
    diff.noalias() = h * w2;
    diff -= y;
    const float loss = diff.squaredNorm() / static_cast<float>(nodes);
    d_out = diff * (2.0f / static_cast<float>(nodes));
    d_w2.noalias() = h.transpose() * d_out;
    d_h.noalias() = d_out * w2.transpose();
    d_z = (d_h.array() * (z.array() > 0.0f).cast<float>()).matrix();
    d_xw.setZero(nodes, kHidden);
    scatter_rows(d_xw.data(), d_z.data(), src, dst);
    d_w1.noalias() = x.transpose() * d_xw;
    w1 -= kLr * d_w1;
    w2 -= kLr * d_w2;
    return loss;
  }
  Mat xw, z, h, diff, d_out, d_w2, d_h, d_z, d_xw, d_w1;
};

Mat to_mat(const Tensor& t) {
  const std::vector<float> v = t.to_vector<float>();
  return Eigen::Map<const Mat>(v.data(), t.shape()[0], t.shape()[1]);
}

int main(int argc, char** argv) {
  const int64_t nodes = argc > 1 ? std::atoll(argv[1]) : 20000;
  const int64_t edges = argc > 2 ? std::atoll(argv[2]) : 10 * nodes;
  // A random graph with a self-loop per node; symmetric normalization 1 / sqrt(deg(src) deg(dst)).
  std::srand(17);
  std::vector<int32_t> src(static_cast<size_t>(edges)), dst(static_cast<size_t>(edges));
  std::vector<float> degree(static_cast<size_t>(nodes), 0.0f);
  for (int64_t e = 0; e < edges; ++e) {
    const bool self = e < nodes;
    src[static_cast<size_t>(e)] = static_cast<int32_t>(self ? e : std::rand() % nodes);
    dst[static_cast<size_t>(e)] = static_cast<int32_t>(self ? e : std::rand() % nodes);
    degree[static_cast<size_t>(dst[static_cast<size_t>(e)])] += 1;
  }
  std::vector<float> norm(static_cast<size_t>(edges));
  for (size_t e = 0; e < norm.size(); ++e)
    norm[e] = 1.0f / std::sqrt(degree[static_cast<size_t>(src[e])] * degree[static_cast<size_t>(dst[e])] + 1.0f);
  const Tensor tx = ag::random_uniform({nodes, kFeatures}, ag::float32, -1, 1, 5);
  const Tensor ty = ag::random_uniform({nodes, 1}, ag::float32, -1, 1, 6);
  const Tensor tsrc = ag::constant(src, {edges}), tdst = ag::constant(dst, {edges});
  const Tensor tnorm = ag::constant(norm, {edges, 1});
  const Tensor w1_0 = ag::random_normal({kFeatures, kHidden}, ag::float32, 0, 0.3, 7);
  const Tensor w2_0 = ag::random_normal({kHidden, 1}, ag::float32, 0, 0.3, 8);

  ag::Variable w1(w1_0, "w1"), w2(w2_0, "w2");
  auto body = [&](Tensor x, Tensor y, Tensor s, Tensor d, Tensor n) {
    ag::GradientTape tape;
    const Tensor z = ag::unsorted_segment_sum(ag::gather(ag::matmul(x, w1), s) * n, d, nodes);
    const Tensor diff = ag::matmul(ag::relu(z), w2) - y;
    const Tensor loss = ag::reduce_mean(diff * diff);
    const std::vector<Tensor> g = tape.gradient(loss, {w1, w2});
    w1.assign_sub(kLr * g[0]);
    w2.assign_sub(kLr * g[1]);
    return loss;
  };
  auto step = ag::function(body, {.name = "gcn_step"});
  const auto t0 = std::chrono::steady_clock::now();
  float agc_loss = step(tx, ty, tsrc, tdst, tnorm).item<float>();
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ag::set_num_threads(1);
  for (int k = 1; k < kSteps; ++k) agc_loss = step(tx, ty, tsrc, tdst, tnorm).item<float>();

  const Mat x = to_mat(tx), y = to_mat(ty);
  ByHand hand{x, src, dst, norm, y, to_mat(w1_0), to_mat(w2_0)};
  float hand_loss = 0;
  for (int k = 0; k < kSteps; ++k) hand_loss = hand.step();
  const float w1_diff = (to_mat(w1.value()) - hand.w1).cwiseAbs().maxCoeff();
  if (std::abs(agc_loss - hand_loss) > 1e-4f * std::max(1.0f, std::abs(hand_loss)) || w1_diff > 1e-4f)
    std::printf("warning: after %d steps the losses are %g and %g, w1 differs by %g\n", kSteps, static_cast<double>(agc_loss),
                static_cast<double>(hand_loss), static_cast<double>(w1_diff));

  // Both train on from their own (equal) state; each row takes the best of its rounds.
  auto run_agc = [&] { agbench::keep(step(tx, ty, tsrc, tdst, tnorm)); };
  auto run_hand = [&] { agbench::keep(hand.step()); };
  const std::vector<double> t = agbench::time_interleaved(ag::set_num_threads, {{run_hand, 1}, {run_agc, 1}, {run_agc, 2}});
  std::vector<agbench::Row> rows;
  for (int threads : {1, 2}) {
    const double agc = t[threads == 1 ? 1 : 2];
    rows.push_back({fmt::format("train step, {} thread{}", threads, threads > 1 ? "s" : ""), agbench::us(agc),
                    agbench::us(t[0]) + " by hand", fmt::format("{:.2f}x", agc / t[0]),
                    threads == 1 ? fmt::format("loss after {} steps {:.5f} (by hand {:.5f}), w1 within {:.1e}", kSteps, agc_loss, hand_loss, w1_diff)
                                 : "by hand on 1 thread"});
  }
  rows.push_back({"first call (trace + backward + compile, default threads)", agbench::ms(first), "", "", ""});
  agbench::print_table(fmt::format("GCN training step: {} nodes, {} edges, {} features, {} hidden, float32", nodes, edges, kFeatures, kHidden),
                       rows);
  return 0;
}
