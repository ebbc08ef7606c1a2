// A seeded random-graph generator: elementwise chains with broadcasting, casts, reductions,
// matmuls, transposes, concats of slices (some empty), gathers with data-dependent indices, If
// and While with carried values; float32 or float64 values and int32 or int64 integers; some
// functions with an input_signature of unknown dims (and a run-time size-1 operand). Each graph
// runs eagerly, through the interpreter and through the JIT (one function in 8 optimized: two of
// three of those at the default level, agc's pipeline, the third at LLVM's O3; the rest at 0);
// the results must agree. The programs run on 3 x 4 inputs, and in the Wide suites
// on inputs up to [2400, 250] (vector loops, the thread pool, streaming stores).
// AG_RANDOM_GRAPHS=<n> runs n graphs instead of the default 1024 (the long mode: e.g. 20000), and
// scales the Wide suites with it (n/32 functions of 4 programs, n/128 gradient graphs).
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>

#include "ag/detail/parallel.h"
#include "jit_test_util.h"
#include "finite_differences.h"
#include "random_program.h"
#include "test_data.h"

namespace {

using agtest::Dims;
using agtest::Mix;
using agtest::mix_of;
using agtest::Program;
using Rng = std::mt19937_64;

int graphs_to_run() {
  const char* e = std::getenv("AG_RANDOM_GRAPHS");
  return e ? std::max(16, std::atoi(e)) : 1024;
}

// Graphs [base, base + 4) of the seeded sequence as one function (four independent programs, their
// results concatenated), with its inputs and options (mix_of its index).
struct RandomFunction {
  static constexpr int kPrograms = 4;
  int base;
  Dims dims;
  std::vector<Program> programs;
  ag::DType fdt, idt;
  bool unknown;
  ag::Tensor a, b, n;
  ag::FunctionOptions options;

  RandomFunction(int first, Dims d) : base(first), dims(d) {
    const int64_t M = d.rows, K = d.cols;
    for (int i = 0; i < kPrograms; ++i) programs.emplace_back(static_cast<uint64_t>(base + i) * 2654435761u + 1, M, K);
    const Mix mix = mix_of(index(), d);
    fdt = mix.fdt;
    idt = mix.idt;
    unknown = mix.unknown;
    const uint64_t s = static_cast<uint64_t>(base);
    a = agtest::sample(fdt, {M, K}, s, agtest::Values::Moderate);
    b = agtest::sample(fdt, {mix.b_of_one ? 1 : K}, s + 1, agtest::Values::Moderate);
    n = agtest::sample(idt, {M, K}, s + 2, agtest::Values::Moderate);
    options.input_signature = mix.signature;
  }
  int index() const { return base / kPrograms; }
  auto fn() const {
    return [this](ag::Tensor x, ag::Tensor y, ag::Tensor m) {
      std::vector<ag::Tensor> outs;
      for (const Program& p : programs) outs.push_back(p.run(x, y, m));
      return ag::concat(outs, 0);
    };
  }
  // Wider, also an elementwise result of them (with x broadcast over the programs): a vector
  // loop writes it straight into the returned buffer, where streaming stores go (the
  // concatenation is a copy, which never streams).
  bool wide() const { return dims.rows * dims.cols > 12; }
  auto wide_fn() const {
    return [this](ag::Tensor x, ag::Tensor y, ag::Tensor m) {
      const ag::Tensor all = fn()(x, y, m);
      return std::tuple<ag::Tensor, ag::Tensor>{all, ag::tanh(all) * 0.5f + x};
    };
  }
};

// The largest |x - y| over the elements; infinite where only one of the two is NaN.
double max_abs_diff(const ag::Tensor& x, const ag::Tensor& y) {
  const std::vector<double> u = x.to_vector<double>(), v = y.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < u.size(); ++i) {
    if (std::isnan(u[i]) != std::isnan(v[i])) return std::numeric_limits<double>::infinity();
    if (!std::isnan(u[i])) worst = std::max(worst, std::abs(u[i] - v[i]));
  }
  return worst;
}

// eager == interpreter == JIT, as agtest::expect_three_way_with. Wide float32 programs sum
// hundreds to thousands of terms (reductions, matmuls, the gradients of broadcasts) before tanh,
// exp and differences; eager and compiled code sum in different orders, and where a sum cancels
// both stray from the exact value by more than `tol` (wide function 39, graphs 100236..100239 at
// [2400, 250]: an element 0.1799326 in float64 is 0.1800308 eager and 0.1799097 compiled). There
// the same program in float64 is the judge: a backend's worst error over the tensor may be at
// most 4x the eager run's. A wrong element, broadcast or block errs by the values' own size.
template <class F>
void expect_three_way_judged(const std::string& what, F fn, const ag::FunctionOptions& options, agtest::Tol tol,
                             const ag::Tensor& a, const ag::Tensor& b, const ag::Tensor& n) {
  const bool judged = a.dtype() == ag::float32 && a.num_elements() > 12;
  if (!judged) {
    agtest::expect_three_way_with(what, fn, options, tol, a, b, n);
    return;
  }
  const std::vector<ag::Tensor> eager = ag::tree_leaves(fn(a, b, n));
  ag::FunctionOptions interp_options = options;
  interp_options.jit_compile = false;
  auto interp = ag::function(fn, interp_options);
  auto jit = ag::function(fn, options);
  const std::vector<ag::Tensor> via_interp = ag::tree_leaves(interp(a, b, n)), via_jit = ag::tree_leaves(jit(a, b, n));
  ASSERT_EQ(eager.size(), via_interp.size()) << what;
  ASSERT_EQ(eager.size(), via_jit.size()) << what;
  std::vector<ag::Tensor> exact;  // the float64 run, made when a comparison needs it
  for (size_t i = 0; i < eager.size(); ++i)
    for (const auto& [backend, got] : {std::pair{"interpreter", via_interp[i]}, std::pair{"jit", via_jit[i]}}) {
      if (agtest::same_tensor(eager[i], got, tol)) continue;
      ASSERT_EQ(eager[i].shape(), got.shape()) << what << " [" << backend << "] output " << i;
      if (exact.empty()) exact = ag::tree_leaves(fn(ag::cast(a, ag::float64), ag::cast(b, ag::float64), n));
      const double eager_error = max_abs_diff(eager[i], exact[i]), error = max_abs_diff(got, exact[i]);
      EXPECT_LE(error, 4 * eager_error + tol.atol) << what << " [" << backend << "] output " << i
                                                   << ": its worst error against float64 is " << error
                                                   << ", the eager run's " << eager_error;
    }
}

bool same_bits(const ag::Tensor& x, const ag::Tensor& y) {
  return x.dtype() == y.dtype() && x.shape() == y.shape() &&
         std::memcmp(ag::detail::impl_of(x)->data, ag::detail::impl_of(y)->data, static_cast<size_t>(x.num_elements()) * ag::dtype_size(x.dtype())) == 0;
}

// Results do not change in a bit with the thread count (docs/jit.md, "Determinism"): the eager
// and the compiled run of a function on one thread and on three (an uneven split of its rows,
// reductions and products) must be identical.
template <class F>
void expect_same_bits_for_thread_counts(const std::string& what, F fn, const ag::FunctionOptions& options, const ag::Tensor& a,
                                        const ag::Tensor& b, const ag::Tensor& n) {
  auto jit = ag::function(fn, options);
  constexpr int kCounts[] = {1, 3};
  std::vector<ag::Tensor> eager[2], compiled[2];
  for (int i = 0; i < 2; ++i) {
    const ag::detail::ScopedNumThreads threads(kCounts[i]);
    eager[i] = ag::tree_leaves(fn(a, b, n));
    compiled[i] = ag::tree_leaves(jit(a, b, n));
  }
  for (size_t j = 0; j < eager[0].size(); ++j) {
    EXPECT_TRUE(same_bits(eager[0][j], eager[1][j])) << what << " [eager] output " << j << ": 1 and 3 threads differ";
    EXPECT_TRUE(same_bits(compiled[0][j], compiled[1][j])) << what << " [jit] output " << j << ": 1 and 3 threads differ";
  }
}

// The JIT's level for function (or gradient graph) k: every 8th is optimized (its compile
// dominates the cost), two of three of those by agc's pipeline (the default, AG_JIT_OPT=2) and
// the third by LLVM's O3; the others take the fast path. Both code generators and both
// optimization pipelines are checked, and the suite stays quick.
const char* opt_level_for(int k) {
  if (k % 8) return "0";
  return (k / 8) % 3 == 2 ? "3" : "2";
}

// Runs graphs [first, first + count) of the seeded sequence on [rows, cols] inputs. `streaming`:
// results of 4 KB or more are stored around the cache (AG_NONTEMPORAL), as large ones are.
void run_graphs(int first, int count, Dims dims = {}, bool streaming = false) {
  const agtest::ScopedEnv opt("AG_JIT_OPT", "0"), roll("AG_JIT_ROLL", "auto");
  const agtest::ScopedEnv nontemporal("AG_NONTEMPORAL", streaming ? "4096" : "auto");
  int checked = 0;
  for (int base = first; base < first + count; base += RandomFunction::kPrograms) {
    const RandomFunction f(base, dims);
    // Every 3rd has rolled loops (its row reductions accumulate in registers; rolled_loops_test).
    const int k = f.index();
    setenv("AG_JIT_OPT", opt_level_for(k), 1);
    setenv("AG_JIT_ROLL", k % 3 ? "auto" : "1", 1);
    const std::string what = fmt::format("random graphs {}..{} ([{}, {}], {}, {}{}{})", base, base + f.kPrograms - 1, dims.rows,
                                         dims.cols, ag::dtype_name(f.fdt), ag::dtype_name(f.idt),
                                         f.unknown ? ", unknown dims" : "", streaming ? ", streaming stores" : "");
    auto check = [&](auto fn) { expect_three_way_judged(what, fn, f.options, {.rtol = 1e-4, .atol = 1e-4}, f.a, f.b, f.n); };
    if (f.wide()) check(f.wide_fn());
    else check(f.fn());
    // The pool splits work from 2 x 128K elements (docs/jit.md, "Threads").
    if (dims.rows * dims.cols >= 2 * 131072) expect_same_bits_for_thread_counts(what, f.wide_fn(), f.options, f.a, f.b, f.n);
    checked += f.kPrograms;
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GE(checked, count);
}

// The gradients of the random programs: a tape inside the function differentiates a weighted sum
// of the outputs with respect to both float inputs, through the staged If/While of the traced
// graphs (their gradient rules) and through the plain C++ control flow of the eager run; the
// three backends must agree. For float64 functions the eager gradient must also match central
// finite differences.
void run_gradient_graphs(int first, int count, Dims dims = {}) {
  const agtest::ScopedEnv opt("AG_JIT_OPT", "0"), roll("AG_JIT_ROLL", "auto");
  const int64_t M = dims.rows, K = dims.cols;
  const bool wide = M * K > 12;
  for (int base = first; base < first + count; ++base) {
    const Program program(static_cast<uint64_t>(base) * 2654435761u + 1, M, K);
    const int k = base;
    const Mix mix = mix_of(k, dims);
    const ag::DType fdt = mix.fdt, idt = mix.idt;
    const bool unknown = mix.unknown, b_of_one = mix.b_of_one;
    const uint64_t s = static_cast<uint64_t>(base) + 7;
    const ag::Tensor a = agtest::sample(fdt, {M, K}, s, agtest::Values::Moderate);
    const ag::Tensor b = agtest::sample(fdt, {b_of_one ? 1 : K}, s + 1, agtest::Values::Moderate);
    const ag::Tensor n = agtest::sample(idt, {M, K}, s + 2, agtest::Values::Moderate);
    const ag::Tensor w = agtest::sample(fdt, {3, M, K}, s + 3, agtest::Values::Moderate);
    auto loss = [&program, w](const ag::Tensor& x, const ag::Tensor& y, const ag::Tensor& m) {
      return ag::reduce_sum(program.run(x, y, m) * ag::cast(w, x.dtype()));  // float64 when judged
    };
    auto fn = [loss](ag::Tensor x, ag::Tensor y, ag::Tensor m) {
      ag::GradientTape tape;
      tape.watch(x);
      tape.watch(y);
      const std::vector<ag::Tensor> g = tape.gradient(loss(x, y, m), {x, y}, ag::UnconnectedGradients::zero);
      return std::tuple<ag::Tensor, ag::Tensor>{g[0], g[1]};
    };
    ag::FunctionOptions options;
    options.input_signature = mix.signature;
    const std::string what = fmt::format("gradients of random graph {} ([{}, {}], {}, {}{})", base, M, K, ag::dtype_name(fdt),
                                         ag::dtype_name(idt), unknown ? ", unknown dims" : "");
    setenv("AG_JIT_OPT", opt_level_for(k), 1);
    setenv("AG_JIT_ROLL", k % 3 ? "auto" : "1", 1);
    expect_three_way_judged(what, fn, options, {.rtol = 1e-3, .atol = 1e-4}, a, b, n);
    if (fdt == ag::float64) {
      const auto [ga, gb] = fn(a, b, n);
      const std::vector<double> got = ga.to_vector<double>();
      const std::vector<double> av = a.to_vector<double>();
      const size_t stride = wide ? av.size() / 4 + 1 : 5;  // a few elements: each costs two runs
      for (size_t e = 0; e < av.size(); e += stride) {
        auto moved = [&](double delta) {
          std::vector<double> p = av;
          p[e] += delta;
          return loss(ag::constant(p, {M, K}), b, n).item<double>();
        };
        const std::string differs = agtest::differs_from_finite_difference(got[e], moved);
        EXPECT_TRUE(differs.empty()) << what << ": d/da[" << e << "] " << differs;
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


// The same programs on wider inputs, for the code that 3 x 4 never reaches: vector loops over rows
// with and without a partial last block (16 and 8 lanes), rows of a single block, broadcasts of
// [K] and [M,1] inside them, rows split over the thread pool (a graph's tensors of 2 x 128K
// elements and more), and, in every other function, streaming stores into the results.
constexpr Dims kWide[] = {{5, 17}, {37, 16}, {2, 257}, {64, 63}, {3, 33}, {129, 8}, {1031, 255}, {2400, 250}};
constexpr int kWideShapes = static_cast<int>(std::size(kWide));

// Wide function f: its first graph, and whether it streams. Each round over the shapes shifts the
// function's index (its dtypes, unknown dims, O0 or O3, rolled loops) and flips which shapes
// stream, so no shape keeps one mix.
int wide_base(int f) { return 100000 + RandomFunction::kPrograms * (f + 5 * (f / kWideShapes)); }
bool wide_streams(int f) { return (f + f / kWideShapes) % 2 == 1; }

void run_wide_graphs(int first, int functions) {
  for (int f = first; f < first + functions; ++f) {
    run_graphs(wide_base(f), RandomFunction::kPrograms, kWide[f % kWideShapes], wide_streams(f));
    if (::testing::Test::HasFailure()) break;
  }
}

int wide_functions() { return std::max(8, graphs_to_run() / 64); }

// The gradients of wide programs (backward reductions over rows and columns, matmul transposes,
// broadcasts of the gradients), one shape after the other.
TEST(JitRandomGraphs, WideGradients) {
  for (int g = 0; g < std::max(8, graphs_to_run() / 128); ++g) {
    run_gradient_graphs(200000 + g, 1, kWide[g % kWideShapes]);
    if (::testing::Test::HasFailure()) break;
  }
}
TEST(JitRandomGraphs, Wide0) { run_wide_graphs(0, wide_functions()); }
TEST(JitRandomGraphs, Wide1) { run_wide_graphs(wide_functions(), wide_functions()); }

// The wide suites reach the code they are there for: their largest streaming function compiles to
// vector loops, loops over the pool and streaming stores (a silent fallback to scalar code, or
// a threshold that moved, would pass every comparison above).
TEST(JitRandomGraphs, WideFunctionsReachVectorParallelAndStreamingCode) {
  constexpr int f = kWideShapes - 1;
  ASSERT_TRUE(wide_streams(f));
  const agtest::ScopedEnv opt("AG_JIT_OPT", "0"), nontemporal("AG_NONTEMPORAL", "4096");
  const RandomFunction rf(wide_base(f), kWide[f]);
  ASSERT_FALSE(rf.unknown);
  auto jit = ag::function(rf.wide_fn(), rf.options);
  const std::string ir = jit.get_concrete_function(rf.a, rf.b, rf.n).llvm_ir();
  const char* vector_type = rf.fdt == ag::float32 ? " x float>" : " x double>";
  EXPECT_NE(ir.find(vector_type), std::string::npos) << "no vector loop";
  EXPECT_NE(ir.find("agc_rt_parallel_for"), std::string::npos) << "no loop over the pool";
  EXPECT_NE(ir.find("!nontemporal"), std::string::npos) << "no streaming store";
}

}  // namespace
