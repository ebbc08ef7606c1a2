// A seeded random-graph generator: elementwise chains with broadcasting, casts, reductions,
// matmuls, transposes, concats of slices (some empty), gathers with data-dependent indices, If
// and While with carried values; float32 or float64 values and int32 or int64 integers; some
// functions with an input_signature of unknown dims (and a run-time size-1 operand). Each graph
// runs eagerly, through the interpreter and through the JIT (one function in 8 at AG_JIT_OPT=3,
// the rest at 0); the results must agree.
// AG_RANDOM_GRAPHS=<n> runs n graphs instead of the default 1024 (the long mode: e.g. 20000).
#include <cstdlib>
#include <random>

#include "jit_test_util.h"
#include "test_data.h"

namespace {

using Rng = std::mt19937_64;

// One random program over three inputs: a float [3,4], a float [4] (or [1]) and an integer [3,4].
// Every value keeps a shape from {[], [1], [4], [3,1], [1,4], [3,4]} so any two broadcast (layout
// ops leave the set and come back). Branch conditions, trip counts and gather indices come from
// integers only: they are exact on every path, so a float rounding difference can never flip
// control flow or pick another element.
class Program {
 public:
  explicit Program(uint64_t seed) : seed_(seed) {}

  ag::Tensor run(const ag::Tensor& a, const ag::Tensor& b, const ag::Tensor& n) const {
    Rng rng(seed_);
    std::vector<ag::Tensor> f = {a, b, ag::tanh(a * b)};
    std::vector<ag::Tensor> ints = {n, n % 5};
    const int steps = 6 + static_cast<int>(rng() % 10);
    for (int s = 0; s < steps; ++s) step(rng, f, ints, 0);
    return ag::stack({full(f.back()), full(f[f.size() / 2]), full(ag::cast(ints.back(), a.dtype()))});
  }

 private:
  static const ag::Tensor& pick(Rng& rng, const std::vector<ag::Tensor>& v) { return v[rng() % v.size()]; }

  static ag::Tensor unary(Rng& rng, const ag::Tensor& x) {
    switch (rng() % 9) {
      case 0: return ag::tanh(x);
      case 1: return ag::sigmoid(x);
      case 2: return ag::relu(x) - 0.5f;
      case 3: return ag::abs(x);
      case 4: return ag::sin(x);
      case 5: return ag::exp(ag::tanh(x));
      case 6: return ag::sqrt(ag::abs(x) + 0.25f);
      case 7: return ag::square(ag::tanh(x));
      default: return -x * 0.75f;
    }
  }

  static ag::Tensor binary(Rng& rng, const ag::Tensor& x, const ag::Tensor& y) {
    switch (rng() % 6) {
      case 0: return x + y;
      case 1: return x - y;
      case 2: return ag::tanh(x * y);
      case 3: return x / (ag::abs(y) + 1.0f);
      case 4: return ag::maximum(x, y);
      default: return ag::minimum(x, y * 0.5f);
    }
  }

  // Reductions keep dims, so results stay in the broadcast-compatible shape set.
  static ag::Tensor reduce(Rng& rng, const ag::Tensor& x) {
    if (x.rank() < 2) return ag::reduce_sum(x) * 0.125f;
    const std::vector<int64_t> axes = rng() % 3 == 0 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{static_cast<int64_t>(rng() % 2)};
    switch (rng() % 4) {
      case 0: return ag::reduce_sum(x, axes, true) * 0.25f;
      case 1: return ag::reduce_mean(x, axes, true);
      case 2: return ag::reduce_max(x, axes, true);
      default: return ag::reduce_min(x, axes, true);
    }
  }

  static ag::Tensor full(const ag::Tensor& x) { return x + ag::zeros({3, 4}, x.dtype()); }

  // Layout ops: each leaves the broadcast shape set and comes back to it.
  static ag::Tensor layout(Rng& rng, const std::vector<ag::Tensor>& f, const std::vector<ag::Tensor>& ints) {
    const ag::Tensor x = full(pick(rng, f)), y = full(pick(rng, f));
    switch (rng() % 5) {
      case 0: return ag::transpose(unary(rng, ag::transpose(x)) * 0.5f + ag::transpose(y));  // via [4,3]
      case 1: return ag::transpose(ag::reduce_max(ag::transpose(x), {1}, true));             // [4,1] -> [1,4]
      case 2: {  // columns of x then of y
        const int64_t k = 1 + static_cast<int64_t>(rng() % 3);
        return ag::concat({ag::slice(x, {0, 0}, {3, k}), ag::slice(y, {0, k}, {3, 4 - k})}, 1);
      }
      case 3: {  // rows of x then of y; r = 0 or 3 concatenates an empty slice
        const int64_t r = static_cast<int64_t>(rng() % 4);
        return ag::concat({ag::slice(x, {0, 0}, {r, 4}), ag::slice(y, {r, 0}, {3 - r, 4})}, 0);
      }
      default: {  // gather with indices computed from the integers (always in range)
        const ag::Tensor i = full(pick(rng, ints));
        if (rng() % 2) return ag::gather(x, ag::floormod(ag::reduce_sum(i, {0}), 4), 1);
        return ag::gather(x, ag::floormod(ag::reduce_sum(i, {1}), 3), 0);
      }
    }
  }

  void step(Rng& rng, std::vector<ag::Tensor>& f, std::vector<ag::Tensor>& ints, int depth) const {
    switch (rng() % (depth < 2 ? 12 : 10)) {
      case 0:
      case 1: f.push_back(unary(rng, pick(rng, f))); break;
      case 2:
      case 3: f.push_back(binary(rng, pick(rng, f), pick(rng, f))); break;
      case 4: f.push_back(reduce(rng, pick(rng, f))); break;
      case 5: {  // matmul [3,4] x [4,4] with a constant matrix
        const ag::Tensor x = full(pick(rng, f));
        const ag::Tensor w = agtest::sample(x.dtype(), {4, 4}, rng() % 1000, agtest::Values::Moderate) * 0.1f;
        f.push_back(ag::tanh(ag::matmul(x, w)));
        break;
      }
      case 6: {  // integer arithmetic, exact everywhere
        const ag::Tensor& i = pick(rng, ints);
        const ag::Tensor& j = pick(rng, ints);
        switch (rng() % 4) {
          case 0: ints.push_back((i * 3 + j) % 11); break;
          case 1: ints.push_back(ag::maximum(i, j) - ag::floordiv(j, 3)); break;
          case 2: ints.push_back(ag::reduce_sum(i, {1}, true) % 7); break;
          default: ints.push_back(ag::floormod(i - j * 2, 5)); break;
        }
        break;
      }
      case 7: {
        const ag::Tensor& x = pick(rng, f);
        f.push_back(ag::cast(pick(rng, ints), x.dtype()) * 0.1f + x);
        break;
      }
      case 8:
      case 9: f.push_back(layout(rng, f, ints)); break;
      case 10: {  // If on an integer condition; both branches run random steps on copies of the state
        const ag::Tensor c = ag::reduce_sum(pick(rng, ints)) % 2 == 0;
        const uint64_t then_seed = rng(), else_seed = rng();
        const ag::Tensor x = full(pick(rng, f));
        const ag::Tensor k = full(pick(rng, ints));
        auto branch = [&](uint64_t bs) {
          Rng r(bs);
          std::vector<ag::Tensor> bf = {x, f.front()};
          std::vector<ag::Tensor> bi = {k};
          for (int s = 0; s < 3; ++s) step(r, bf, bi, depth + 1);
          return std::tuple<ag::Tensor, ag::Tensor>{full(bf.back()), full(bi.back())};
        };
        auto [y, m] = ag::cond(c, [&] { return branch(then_seed); }, [&] { return branch(else_seed); });
        f.push_back(y);
        ints.push_back(m);
        break;
      }
      default: {  // While with an integer trip count (0..3) carrying a float and an int value
        const ag::Tensor trips = ag::reduce_max(pick(rng, ints)) % 4;
        const uint64_t body_seed = rng();
        auto [i, x, k] = ag::while_loop(
            [&](const ag::Tensor& it, const ag::Tensor&, const ag::Tensor&) { return it < trips; },
            [&](const ag::Tensor& it, const ag::Tensor& xv, const ag::Tensor& kv) {
              Rng r(body_seed);
              std::vector<ag::Tensor> bf = {xv, f.front()};
              std::vector<ag::Tensor> bi = {kv, it + kv};
              for (int s = 0; s < 3; ++s) step(r, bf, bi, depth + 1);
              return std::tuple<ag::Tensor, ag::Tensor, ag::Tensor>{it + 1, full(ag::tanh(bf.back())), full(bi.back() % 13)};
            },
            std::tuple<ag::Tensor, ag::Tensor, ag::Tensor>{ag::zeros({}, ints.front().dtype()), full(pick(rng, f)), full(pick(rng, ints))});
        f.push_back(x);
        ints.push_back(k + i);
        break;
      }
    }
  }

  uint64_t seed_;
};

int graphs_to_run() {
  const char* e = std::getenv("AG_RANDOM_GRAPHS");
  return e ? std::max(16, std::atoi(e)) : 1024;
}

// Runs graphs [first, first + count) of the seeded sequence.
void run_graphs(int first, int count) {
  constexpr int kPerFunction = 4;  // independent random programs traced into one function
  const agtest::ScopedEnv opt("AG_JIT_OPT", "0"), roll("AG_JIT_ROLL", "auto");
  int checked = 0;
  for (int base = first; base < first + count; base += kPerFunction) {
    std::vector<Program> programs;
    for (int k = 0; k < kPerFunction; ++k) programs.emplace_back(static_cast<uint64_t>(base + k) * 2654435761u + 1);
    auto fn = [&programs](ag::Tensor a, ag::Tensor b, ag::Tensor n) {
      std::vector<ag::Tensor> outs;
      for (const Program& p : programs) outs.push_back(p.run(a, b, n));
      return ag::concat(outs, 0);
    };
    // Per function: the dtypes, and for one in four an input_signature of unknown dims (half of
    // those get a size-1 b, broadcast at run time).
    const int k = base / kPerFunction;
    const ag::DType fdt = k % 3 == 1 ? ag::float64 : ag::float32, idt = k % 2 ? ag::int64 : ag::int32;
    const bool unknown = k % 4 == 2, b_of_one = unknown && k % 8 == 2;
    const uint64_t s = static_cast<uint64_t>(base);
    const ag::Tensor a = agtest::sample(fdt, {3, 4}, s, agtest::Values::Moderate);
    const ag::Tensor b = agtest::sample(fdt, {b_of_one ? 1 : 4}, s + 1, agtest::Values::Moderate);
    const ag::Tensor n = agtest::sample(idt, {3, 4}, s + 2, agtest::Values::Moderate);
    ag::FunctionOptions options;
    if (unknown)
      options.input_signature = {ag::TensorSpec({-1, -1}, fdt), ag::TensorSpec({-1}, fdt), ag::TensorSpec({-1, 4}, idt)};
    // Every 8th function goes through the full O3 pipeline (its compile dominates the cost),
    // the others through the fast path: both code generators are checked, the suite stays quick.
    // Every 3rd has rolled loops (its row reductions accumulate in registers; rolled_loops_test).
    setenv("AG_JIT_OPT", k % 8 ? "0" : "3", 1);
    setenv("AG_JIT_ROLL", k % 3 ? "auto" : "1", 1);
    agtest::expect_three_way_with(fmt::format("random graphs {}..{} ({}, {}{})", base, base + kPerFunction - 1,
                                              ag::dtype_name(fdt), ag::dtype_name(idt), unknown ? ", unknown dims" : ""),
                                  fn, options, {.rtol = 1e-4, .atol = 1e-4}, a, b, n);
    checked += kPerFunction;
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GE(checked, count);
}

// The gradients of the random programs: a tape inside the function differentiates a weighted sum
// of the outputs with respect to both float inputs, through the staged If/While of the traced
// graphs (their gradient rules) and through the plain C++ control flow of the eager run; the
// three backends must agree. For float64 functions the eager gradient must also match central
// finite differences.
void run_gradient_graphs(int first, int count) {
  const agtest::ScopedEnv opt("AG_JIT_OPT", "0"), roll("AG_JIT_ROLL", "auto");
  for (int base = first; base < first + count; ++base) {
    const Program program(static_cast<uint64_t>(base) * 2654435761u + 1);
    const int k = base;
    const ag::DType fdt = k % 3 == 1 ? ag::float64 : ag::float32, idt = k % 2 ? ag::int64 : ag::int32;
    const bool unknown = k % 4 == 2, b_of_one = unknown && k % 8 == 2;
    const uint64_t s = static_cast<uint64_t>(base) + 7;
    const ag::Tensor a = agtest::sample(fdt, {3, 4}, s, agtest::Values::Moderate);
    const ag::Tensor b = agtest::sample(fdt, {b_of_one ? 1 : 4}, s + 1, agtest::Values::Moderate);
    const ag::Tensor n = agtest::sample(idt, {3, 4}, s + 2, agtest::Values::Moderate);
    const ag::Tensor w = agtest::sample(fdt, {3, 3, 4}, s + 3, agtest::Values::Moderate);
    auto loss = [&program, w](const ag::Tensor& x, const ag::Tensor& y, const ag::Tensor& m) {
      return ag::reduce_sum(program.run(x, y, m) * w);
    };
    auto fn = [loss](ag::Tensor x, ag::Tensor y, ag::Tensor m) {
      ag::GradientTape tape;
      tape.watch(x);
      tape.watch(y);
      const std::vector<ag::Tensor> g = tape.gradient(loss(x, y, m), {x, y}, ag::UnconnectedGradients::zero);
      return std::tuple<ag::Tensor, ag::Tensor>{g[0], g[1]};
    };
    ag::FunctionOptions options;
    if (unknown)
      options.input_signature = {ag::TensorSpec({-1, -1}, fdt), ag::TensorSpec({-1}, fdt), ag::TensorSpec({-1, 4}, idt)};
    const std::string what = fmt::format("gradients of random graph {} ({}, {}{})", base, ag::dtype_name(fdt),
                                         ag::dtype_name(idt), unknown ? ", unknown dims" : "");
    setenv("AG_JIT_OPT", k % 8 ? "0" : "3", 1);  // as above: both code generators, a quick suite
    setenv("AG_JIT_ROLL", k % 3 ? "auto" : "1", 1);
    agtest::expect_three_way_with(what, fn, options, {.rtol = 1e-3, .atol = 1e-4}, a, b, n);
    if (fdt == ag::float64) {
      const auto [ga, gb] = fn(a, b, n);
      const std::vector<double> got = ga.to_vector<double>();
      std::vector<double> av = a.to_vector<double>();
      for (size_t e = 0; e < av.size(); e += 5) {  // a few elements: each costs two runs
        constexpr double eps = 1e-6;
        std::vector<double> p = av, q = av;
        p[e] += eps;
        q[e] -= eps;
        const double fd = (loss(ag::constant(p, {3, 4}), b, n).item<double>() - loss(ag::constant(q, {3, 4}), b, n).item<double>()) / (2 * eps);
        EXPECT_NEAR(got[e], fd, 1e-4 * std::max(1.0, std::abs(fd))) << what << ": d/da[" << e << "]";
      }
    }
    if (::testing::Test::HasFailure()) break;
  }
}

TEST(JitRandomGraphs, Gradients) { run_gradient_graphs(0, std::max(64, graphs_to_run() / 16)); }

// Four shards so that ctest can run them in parallel; AG_RANDOM_GRAPHS scales all of them.
constexpr int kShards = 4;
TEST(JitRandomGraphs, Shard0) { run_graphs(0 * graphs_to_run() / kShards, graphs_to_run() / kShards); }
TEST(JitRandomGraphs, Shard1) { run_graphs(1 * graphs_to_run() / kShards, graphs_to_run() / kShards); }
TEST(JitRandomGraphs, Shard2) { run_graphs(2 * graphs_to_run() / kShards, graphs_to_run() / kShards); }
TEST(JitRandomGraphs, Shard3) { run_graphs(3 * graphs_to_run() / kShards, graphs_to_run() / kShards); }

}  // namespace
