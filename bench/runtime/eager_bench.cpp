// Eager runtime benchmark: the dispatch cost of a small op, and the throughput of a binary
// elementwise op, of a 3-op chain and of a bias added to rows on 16M float32, each beside a hand-written Eigen array
// expression and a plain loop measured in the same run. Prints one table and the two targets
// of issue 2 (small-op dispatch <= 300 ns; one elementwise op >= 0.7x the plain loop). Also the
// draws of ag::random::Generator beside the standard library's engine and distributions.
#include <Eigen/Core>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <time.h>

#include "ag/platform.h"
#include "ag/construct.h"
#include "ag/ops.h"
#include "ag/random.h"

namespace {

// Keeps the compiler from deleting or hoisting work whose result is otherwise unused.
template <class T>
inline void escape(T* p) {
  asm volatile("" : : "g"(p) : "memory");
}

// CPU time of this thread: on a shared machine, wall time also counts the time other
// processes hold the core, which is noise here.
double thread_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct Timing {
  double median, best;  // ns per iteration
};

// The median and the best of `reps` runs of `f(iters)`, in nanoseconds per iteration. Both,
// because the machine is shared: the best is the code's cost, the median what a run sees.
template <class F>
Timing measure(int reps, int64_t iters, F&& f) {
  f(std::max<int64_t>(1, iters / 10));  // warm-up: caches, allocator pools, page faults
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double start = thread_ns();
    f(iters);
    t.push_back((thread_ns() - start) / static_cast<double>(iters));
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

// A 64-byte-aligned, already faulted-in float buffer for the baselines.
struct Buffer {
  explicit Buffer(int64_t n) : p(static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>(n) * 4))) {
    std::memset(p, 0, static_cast<size_t>(n) * 4);
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  float* p;
};

using Arr = Eigen::Map<Eigen::ArrayXf, Eigen::Aligned64>;
using ConstArr = Eigen::Map<const Eigen::ArrayXf, Eigen::Aligned64>;

__attribute__((noinline)) void loop_add(const float* __restrict a, const float* __restrict b, float* __restrict c,
                                        int64_t n) {
  for (int64_t i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
__attribute__((noinline)) void loop_chain(const float* __restrict a, const float* __restrict b,
                                          const float* __restrict c, float* __restrict d, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = (a[i] + b[i]) * c[i] - a[i];
}

// c[i, j] = a[i, j] + b[j]: a bias added to every row.
__attribute__((noinline)) void loop_bias(const float* __restrict a, const float* __restrict b, float* __restrict c,
                                         int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) c[i * cols + j] = a[i * cols + j] + b[j];
}

// The benchmark is only worth its numbers if eager and the loop agree (within `tol`: the
// compiler may contract the loop's chain into FMAs).
void check_equal(const ag::Tensor& t, const float* expected, const char* what, float tol = 0) {
  const float* p = t.data<float>();
  for (int64_t i = 0; i < t.num_elements(); ++i)
    if (!(std::abs(p[i] - expected[i]) <= tol)) {
      fmt::print(stderr, "{}: eager and the plain loop differ at element {}: {} vs {}\n", what, i, p[i], expected[i]);
      std::exit(1);
    }
}

struct Row {
  std::string name, variant;
  Timing t;
  double bytes;  // bytes an ideal single pass moves; 0 for dispatch rows
  double vs_loop = 0, vs_eigen = 0;  // throughput ratios, from medians
};

std::string format_ns(double ns) {
  return ns < 1e4 ? fmt::format("{:.1f} ns", ns) : fmt::format("{:.2f} ms", ns / 1e6);
}

void print_table(const std::vector<Row>& rows) {
  fmt::print("{:<34} {:<20} {:>11} {:>11} {:>7} {:>8} {:>8}\n", "case", "variant", "median", "best", "GB/s",
             "vs loop", "vs Eigen");
  fmt::print("{}\n", std::string(105, '-'));
  std::string last;
  for (const Row& r : rows) {
    const std::string name = r.name == last ? "" : r.name;
    last = r.name;
    const std::string gbs = r.bytes > 0 ? fmt::format("{:.1f}", r.bytes / r.t.median) : "";
    const std::string vl = r.vs_loop > 0 ? fmt::format("{:.2f}x", r.vs_loop) : "";
    const std::string ve = r.vs_eigen > 0 ? fmt::format("{:.2f}x", r.vs_eigen) : "";
    fmt::print("{:<34} {:<20} {:>11} {:>11} {:>7} {:>8} {:>8}\n", name, r.variant, format_ns(r.t.median),
               format_ns(r.t.best), gbs, vl, ve);
  }
}

// Times `op()` (which returns a Tensor) on small tensors: the eager dispatch cost.
template <class Op>
Timing time_small(Op&& op) {
  return measure(9, 200000, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      ag::Tensor r = op();
      escape(&r);
    }
  });
}

// Times each of `fs` (eager, Eigen, the plain loop...) over 16M elements, one pass each per
// round, interleaved round by round so that all see the same load on a shared machine.
template <class... F>
std::array<Timing, sizeof...(F)> time_large(F&&... fs) {
  constexpr int kRounds = 11;
  constexpr size_t kN = sizeof...(F);
  std::array<std::vector<double>, kN> t;
  auto once = [](auto& f) {
    const double start = thread_ns();
    f();
    return thread_ns() - start;
  };
  (once(fs), ...);  // warm-up: allocator pool, page faults
  for (int r = 0; r < kRounds; ++r) {
    size_t k = 0;
    ((t[k++].push_back(once(fs))), ...);
  }
  std::array<Timing, kN> out;
  for (size_t k = 0; k < kN; ++k) {
    std::sort(t[k].begin(), t[k].end());
    out[k] = {t[k][kRounds / 2], t[k].front()};
  }
  return out;
}

// `f` with the eager kernels' results written through the cache (AG_NONTEMPORAL=0): the
// baseline of the streaming stores that 16M results get by default.
template <class F>
auto with_cached_stores(F f) {
  return [f] {
    ::setenv("AG_NONTEMPORAL", "0", 1);
    f();
    ::unsetenv("AG_NONTEMPORAL");
  };
}

// The eager op with streaming stores and with cached ones, each in a block of rounds of its own
// (after a warm-up): interleaved, each took over the buffer the other wrote last, and a
// streaming store to a line the cached variant left dirty in the cache pays its write-back (the
// bias row interleaved: 6.5 ms cached, 7.5 streamed; in blocks: 6.6 and 6.2).
template <class F>
std::array<Timing, 2> time_eager_blocks(F op) {
  return {time_large(op)[0], time_large(with_cached_stores(op))[0]};
}

// Adds the eager / eager with cached stores / Eigen / plain-loop rows of one throughput case,
// ratios from the medians.
void add_throughput_rows(std::vector<Row>& rows, const std::string& name, double bytes, const std::array<Timing, 2>& e,
                         const std::array<Timing, 2>& baselines) {
  const auto& [eager, cached] = e;
  const auto& [eigen, loop] = baselines;
  rows.push_back({name, "eager", eager, bytes, loop.median / eager.median, eigen.median / eager.median});
  rows.push_back({name, "eager, cached stores", cached, bytes, loop.median / cached.median, eigen.median / cached.median});
  rows.push_back({name, "Eigen", eigen, bytes, loop.median / eigen.median, 1});
  rows.push_back({name, "plain loop", loop, bytes, 1, eigen.median / loop.median});
}

}  // namespace

// Wall-clock time per call of `f`, the best of `reps` runs of `iters` calls (the thread rows:
// thread CPU time would not see the pool's workers).
template <class F>
double wall_ns(F&& f, int iters, int reps) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) f();
    best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / iters);
  }
  return best;
}

// One eager op `op(a, b)` on the operands `make(rows)` makes, for 64, 256 and 1024 rows of 4096
// elements, on 1 and 2 threads, wall-clock best of 7.
template <class Make, class Op>
void print_one_op_rows(const char* title, Make make, Op op_of) {
  fmt::print("{}\n", title);
  for (int64_t rows : {int64_t{64}, int64_t{256}, int64_t{1024}}) {
    const auto [a, b] = make(rows);
    const int iters = static_cast<int>(std::max<int64_t>(4, 4096 / rows));
    auto op = [&] { escape(ag::detail::impl_of(ag::Tensor(op_of(a, b)))); };
    ag::set_num_threads(1);
    const double one = wall_ns(op, iters, 7);
    ag::set_num_threads(2);
    const double two = wall_ns(op, iters, 7);
    fmt::print("{:>10} {:>12} {:>12} {:>8.2f}x\n", rows * 4096, format_ns(one), format_ns(two), one / two);
  }
}

// The thread pool's threshold: one eager elementwise op at sizes around the grain, 1 and 2
// threads, wall-clock (docs/jit.md, "Threads").
void print_thread_rows() {
  fmt::print("\nthread pool: (a + b) * c - a as eager ops (3 ops), wall-clock best of 7; the pool splits ops of >= 64K elements\n");
  fmt::print("{:>10} {:>12} {:>12} {:>9}\n", "elements", "1 thread", "2 threads", "speed-up");
  for (int64_t n : {int64_t{1} << 15, int64_t{1} << 16, int64_t{1} << 17, int64_t{1} << 18, int64_t{1} << 19, int64_t{1} << 20, int64_t{1} << 22}) {
    const ag::Tensor a = ag::random_uniform({n}, ag::float32, -1, 1, 1), b = ag::random_uniform({n}, ag::float32, -1, 1, 2),
                     c = ag::random_uniform({n}, ag::float32, -1, 1, 3);
    const int iters = static_cast<int>(std::max<int64_t>(4, (int64_t{1} << 24) / n / 4));
    auto op = [&] { escape(ag::detail::impl_of(ag::Tensor((a + b) * c - a))); };
    ag::set_num_threads(1);
    const double one = wall_ns(op, iters, 7);
    ag::set_num_threads(2);
    const double two = wall_ns(op, iters, 7);
    fmt::print("{:>10} {:>12} {:>12} {:>8.2f}x\n", n, format_ns(one), format_ns(two), one / two);
  }
  // A bias on every row splits into chunks of whole rows; a broadcast middle dim along the
  // first dim (docs/eager.md, "Memory").
  print_one_op_rows("a + bias, [rows, 4096] + [4096], one eager op:", [](int64_t rows) {
    return std::pair{ag::random_uniform({rows, 4096}, ag::float32, -1, 1, 1), ag::random_uniform({4096}, ag::float32, -1, 1, 2)};
  }, std::plus<>{});
  print_one_op_rows("a * m, [rows / 4, 4, 4096] * [rows / 4, 1, 4096] (a broadcast middle dim), one eager op:", [](int64_t rows) {
    return std::pair{ag::random_uniform({rows / 4, 4, 4096}, ag::float32, -1, 1, 1),
                     ag::random_uniform({rows / 4, 1, 4096}, ag::float32, -1, 1, 2)};
  }, std::multiplies<>{});
  ag::set_num_threads(1);
}

int main() {
  std::vector<Row> rows;
  // Thread CPU time below: one thread, so it is the whole work (the pool has its own rows).
  ag::set_num_threads(1);

  // ---- dispatch: ops on small tensors ----
  const ag::Tensor a1 = ag::constant({1.5f}), b1 = ag::constant({2.5f});
  const Timing eager_add = time_small([&] { return a1 + b1; });
  float x = 1.5f, y = 2.5f, z = 0;
  const Timing cxx_add = measure(9, 2000000, [&](int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      escape(&x);
      z = x + y;
      escape(&z);
    }
  });
  rows.push_back({"dispatch: a + b, 1-element f32", "eager", eager_add, 0});
  rows.push_back({"dispatch: a + b, 1-element f32", "C++ a + b", cxx_add, 0});
  rows.push_back({"dispatch: a * 2.f (weak scalar)", "eager", time_small([&] { return a1 * 2.f; }), 0});
  rows.push_back({"dispatch: ag::exp(a)", "eager", time_small([&] { return ag::exp(a1); }), 0});
  const ag::Tensor m1 = ag::ones({2, 3}), r1 = ag::ones({3});
  rows.push_back({"dispatch: [2,3] + [3]", "eager", time_small([&] { return m1 + r1; }), 0});
  rows.push_back({"dispatch: reduce_sum([2,3])", "eager", time_small([&] { return ag::reduce_sum(m1); }), 0});

  // ---- throughput on 16M float32 ----
  const int64_t n = int64_t{1} << 24;
  const ag::Tensor a = ag::random_uniform({n}, ag::float32, -1, 1, 1);
  const ag::Tensor b = ag::random_uniform({n}, ag::float32, -1, 1, 2);
  const ag::Tensor c = ag::random_uniform({n}, ag::float32, -1, 1, 3);
  Buffer ba(n), bb(n), bc(n), bo(n);
  std::memcpy(ba.p, a.data<float>(), static_cast<size_t>(n) * 4);
  std::memcpy(bb.p, b.data<float>(), static_cast<size_t>(n) * 4);
  std::memcpy(bc.p, c.data<float>(), static_cast<size_t>(n) * 4);
  const ConstArr A(ba.p, n), B(bb.p, n), C(bc.p, n);
  Arr O(bo.p, n);

  auto add_op = [&] { escape(ag::detail::impl_of(ag::Tensor(a + b))); };
  const auto add = time_eager_blocks(add_op);
  const auto add_base =
      time_large([&] { O = A + B, escape(bo.p); }, [&] { loop_add(ba.p, bb.p, bo.p, n), escape(bo.p); });
  add_throughput_rows(rows, "a + b, 16M f32", 3.0 * 4 * static_cast<double>(n), add, add_base);
  check_equal(a + b, bo.p, "a + b");  // bo holds the plain loop's result

  auto eager_chain = [&] { escape(ag::detail::impl_of(ag::Tensor((a + b) * c - a))); };
  const auto chain = time_eager_blocks(eager_chain);
  const auto chain_base = time_large([&] { O = (A + B) * C - A, escape(bo.p); },
                                     [&] { loop_chain(ba.p, bb.p, bc.p, bo.p, n), escape(bo.p); });
  // Bytes of one fused pass (3 inputs, 1 output); eager makes three passes over memory.
  add_throughput_rows(rows, "(a + b) * c - a, 16M f32", 4.0 * 4 * static_cast<double>(n), chain, chain_base);
  check_equal((a + b) * c - a, bo.p, "(a + b) * c - a", 1e-6f);

  // A bias on every row: the eager op splits into chunks of whole rows and streams its result.
  const int64_t cols = 4096, rows_n = n / cols;
  const ag::Tensor a2 = ag::reshape(a, {rows_n, cols}), bias = ag::random_uniform({cols}, ag::float32, -1, 1, 4);
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const RowMajor, Eigen::Aligned64> A2(ba.p, rows_n, cols);
  const Eigen::Map<const Eigen::RowVectorXf> Bias(bias.data<float>(), cols);
  Eigen::Map<RowMajor, Eigen::Aligned64> O2(bo.p, rows_n, cols);
  auto bias_op = [&] { escape(ag::detail::impl_of(ag::Tensor(a2 + bias))); };
  const auto bias_add = time_eager_blocks(bias_op);
  const auto bias_base = time_large([&] { O2 = A2.rowwise() + Bias, escape(bo.p); },
                                    [&] { loop_bias(ba.p, bias.data<float>(), bo.p, rows_n, cols), escape(bo.p); });
  add_throughput_rows(rows, "a + bias, [4096,4096] + [4096] f32", 2.0 * 4 * static_cast<double>(n), bias_add, bias_base);
  check_equal(a2 + bias, bo.p, "a + bias");

  // ---- random draws of 1M float32: a Generator (counter-based stream; traced and compiled code
  // run the same kernel) vs hand-written loops over std::mt19937 into a preallocated buffer. Not
  // std::uniform_real_distribution: with clang++-19 and libstdc++ 12 it computes a long double
  // log on every number (generate_canonical) and takes ~70 ns per float here, g++ ~1 ns ----
  const int64_t m = int64_t{1} << 20;
  ag::random::Generator gen(7);
  std::mt19937 engine(7);
  auto draw_rows = [&](const std::string& name, auto&& ours, auto&& baseline) {
    const Timing t_ours = measure(7, 8, [&](int64_t k) {
      for (int64_t i = 0; i < k; ++i) escape(ag::detail::impl_of(ag::Tensor(ours())));
    });
    const Timing t_std = measure(7, 8, [&](int64_t k) {
      for (int64_t i = 0; i < k; ++i) baseline(), escape(bo.p);
    });
    rows.push_back({name, "Generator", t_ours, 4.0 * static_cast<double>(m), t_std.median / t_ours.median, 0});
    rows.push_back({name, "mt19937 loop", t_std, 4.0 * static_cast<double>(m), 1, 0});
  };
  auto uniform01 = [&] { return static_cast<float>(engine() >> 8) * 0x1.0p-24f; };
  draw_rows("uniform, 1M f32", [&] { return gen.uniform({m}); }, [&] {
    for (int64_t i = 0; i < m; ++i) bo.p[i] = uniform01();
  });
  draw_rows("normal, 1M f32", [&] { return gen.normal({m}); }, [&] {  // Box-Muller in float
    for (int64_t i = 0; i < m; ++i) {
      const float u1 = 1.f - uniform01(), u2 = uniform01();
      bo.p[i] = std::sqrt(-2.f * std::log(u1)) * std::cos(6.2831853f * u2);
    }
  });

  fmt::print(
      "agc eager runtime: thread CPU time, median and best of repeated runs in one process; 16M = {} elements\n\n",
      n);
  print_table(rows);
  fmt::print("(random draws: \"vs loop\" is against the hand-written std::mt19937 loop)\n");
  const double ratio = add_base[1].median / add[0].median;
  fmt::print("\ntarget: small-op dispatch <= 300 ns ............ median {:.1f} ns, best {:.1f} ns: {}\n",
             eager_add.median, eager_add.best, eager_add.median <= 300 ? "met" : "MISSED");
  fmt::print("target: elementwise op >= 0.7x the plain loop ... {:.2f}x: {}\n", ratio, ratio >= 0.7 ? "met" : "MISSED");
  print_thread_rows();
  return 0;
}
