// What enable_check_numerics() costs (docs/debugging.md): W3's chains on 1M float32 and an MLP
// train step (tape + SGD in one Function, W8's shape), each compiled with and without the checks
// in the same run, one thread; and the same chain eagerly. The baseline is the unchecked code.
//   build/bench/jit/debugging_bench
#include <ag/ag.h>

#include <fmt/format.h>

#include "bench_util.h"
#include "workloads.h"

namespace {

using ag::Tensor;

struct Timing {
  double off = 0, on = 0;
};

// f() timed with checks off, then on (its first checked call, which compiles, not timed).
template <class F>
Timing off_and_on(F&& f) {
  Timing t;
  t.off = agbench::time_per_call(f);
  ag::debugging::enable_check_numerics();
  f();
  t.on = agbench::time_per_call(f);
  ag::debugging::disable_check_numerics();
  return t;
}

agbench::Row row(const std::string& name, Timing t, const std::string& note) {
  const auto time = [](double s) { return s < 1e-3 ? agbench::us(s) : agbench::ms(s); };
  return {name, time(t.on), time(t.off) + " unchecked", fmt::format("{:.2f}x", t.on / t.off), note};
}

}  // namespace

int main() {
  ag::set_num_threads(1);
  std::vector<agbench::Row> rows;
  const Tensor x = ag::random_uniform({1 << 20}, ag::float32, -1, 1, 1);
  auto tanh_chain = ag::function(bench::tanh_chain);
  auto cheap_chain = ag::function(bench::cheap_chain);
  rows.push_back(row("W3 relu(x*a+b)*c - tanh(x), 1M, compiled", off_and_on([&] { agbench::keep(tanh_chain(x)); }),
                     "checks fused into the vector loop"));
  rows.push_back(row("W3 maximum(x*a+b, 0)*c + x, 1M, compiled", off_and_on([&] { agbench::keep(cheap_chain(x)); }),
                     "5 checks per element, one branch per block"));
  rows.push_back(row("W3 relu(x*a+b)*c - tanh(x), 1M, eager", off_and_on([&] { agbench::keep(bench::tanh_chain(x)); }),
                     "one scan per op result"));

  constexpr int64_t kBatch = 64;
  const Tensor xs = ag::random_uniform({kBatch, 784}, ag::float32, 0, 1, 2);
  const Tensor ys = ag::one_hot(ag::random_uniform({kBatch}, ag::int32, 0, 10, 3), 10);
  ag::Variable w1(ag::random_normal({784, 256}, ag::float32, 0, 0.05, 4), "w1"), b1(ag::zeros({256}), "b1");
  ag::Variable w2(ag::random_normal({256, 10}, ag::float32, 0, 0.05, 5), "w2"), b2(ag::zeros({10}), "b2");
  ag::optimizers::SGD sgd(0.01f);
  auto step = ag::function([&](Tensor xb, Tensor yb) {
    ag::GradientTape tape;
    const Tensor h = ag::relu(ag::matmul(xb, w1) + b1);
    const Tensor loss = ag::reduce_mean(ag::nn::softmax_cross_entropy_with_logits(yb, ag::matmul(h, w2) + b2));
    const std::vector<Tensor> g = tape.gradient(loss, {w1, b1, w2, b2});
    sgd.apply_gradients({{g[0], &w1}, {g[1], &b1}, {g[2], &w2}, {g[3], &b2}});
    return loss;
  });
  rows.push_back(row("MLP train step 784-256-10, batch 64, compiled", off_and_on([&] { agbench::keep(step(xs, ys)); }),
                     "GEMMs dominate"));
  agbench::print_table("enable_check_numerics(): checked against unchecked code, same run, one thread", rows);
  return 0;
}
