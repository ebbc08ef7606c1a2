// Benchmarks W1-W5 of issue 4, each row next to its baselines measured in the same run:
//   W1 power (100 chained 10x10 int32 matmuls)   JIT vs eager, interpreter, Eigen fixed-size, plain loop
//   W2 Collatz steps from 27                     JIT vs plain C++ on ints
//   W3 fused chains on 1M / 16M float32          JIT vs Eigen array expression vs plain loop, % of triad bandwidth;
//      a full reduction, row variances and column sums (reduction_rows.cpp), 1 and 2 threads
//   W4 dispatch of a trivial cached call         ns above a direct C++ call, with membarrier and without
//   W5 first call                                trace + optimize + codegen, and the same from the disk cache
//   W5b a large graph (40 small dense layers)     first call and cached call, rolled and unrolled loops
//   W5c a second Function of the same kernels    its first call, kernels shared and compiled again
//   W6 Monte Carlo pi, 1M points (a simulation with a random Generator in a staged loop)
//                                                JIT vs interpreter, eager, plain C++ over std::mt19937,
//                                                and the draws alone as compiled code ran them before
//                                                the stream was inlined
//   W7 1M Variable::assign_add calls in a staged loop (int64)   JIT vs a plain C++ loop of
//      std::atomic<int64_t>::fetch_add (the same per-update atomicity)
//   W8 an MLP train step (tape + SGD in one Function)   JIT vs hand-written Eigen; the eager
//      tape's overhead per recorded op; the train step's first call
//   W8b second order (gradient_rows.cpp): a Hessian-vector product by ag::grad(ag::grad(...))
//      against the first-order gradient and the loss; a compiled Jacobian
// Times are the minimum over repetitions (this machine is shared; the minimum is the least noisy).
// Usage: jit_bench [--quick]          (internal: jit_bench --first-call <workload> [tiered] [after])
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "ag/detail/kernel_set.h"
#include "ag/detail/parallel.h"
#include "baselines.h"
#include "dispatch_rows.h"
#include "gradient_rows.h"
#include "large_graph_rows.h"
#include "reduction_rows.h"
#include "shared_kernel_rows.h"
#include "table.h"
#include "workloads.h"

namespace {

using namespace bench::table;

void w1(int reps) {
  const ag::Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 1);
  auto jit = ag::function(bench::power);
  auto interp = ag::function(bench::power, {.jit_compile = false});
  int32_t r[100];
  const double t_jit = time_ns([&] { keep(jit(x)); }, 200, reps);
  const double t_eager = time_ns([&] { keep(bench::power(x)); }, 20, reps);
  const double t_interp = time_ns([&] { keep(interp(x)); }, 20, reps);
  const double t_eigen = time_ns([&] { bench::power_eigen(x.data<int32_t>(), r); keep(r[0]); }, 200, reps);
  const double t_plain = time_ns([&] { bench::power_plain(x.data<int32_t>(), r); keep(r[0]); }, 200, reps);
  const double best = std::min(t_eigen, t_plain);
  const char* w = "W1 power: 100 chained 10x10 int32 matmuls";
  row(w, "JIT (ag::function)", t_jit, ratio_str(t_jit / t_plain, "plain loop") + ", " + ratio_str(t_jit / best, "best baseline"),
      "<= 0.5x plain loop: " + verdict(t_jit / t_plain <= 0.5));
  row(w, "eager", t_eager, ratio_str(t_eager / t_jit, "JIT"));
  row(w, "graph interpreter", t_interp, ratio_str(t_interp / t_jit, "JIT"));
  row(w, "Eigen Matrix<int,10,10>", t_eigen, ratio_str(t_eigen / t_jit, "JIT"));
  row(w, "plain C++ int[10][10] loop", t_plain, ratio_str(t_plain / t_jit, "JIT"));
}

// A small dense layer: the inline float matmul kernel (rows in blocks of accumulators) and a
// fused epilogue, against Eigen's fixed-size product and vectorized tanh.
void w1b(int reps) {
  const ag::Tensor x = ag::random_uniform({8, 32}, ag::float32, -1, 1, 4);
  const ag::Tensor w = ag::random_uniform({32, 32}, ag::float32, -0.3, 0.3, 5);
  const ag::Tensor b = ag::random_uniform({32}, ag::float32, -0.1, 0.1, 6);
  auto jit = ag::function(bench::dense_layer);
  float y[8 * 32];
  const double t_jit = time_ns([&] { keep(jit(x, w, b)); }, 20000, reps);
  const double t_eigen = time_ns([&] { bench::dense_layer_eigen(x.data<float>(), w.data<float>(), b.data<float>(), y); keep(y[0]); },
                                 20000, reps);
  const char* name = "W1b dense layer tanh(x @ w + b), x [8,32], w [32,32], float32";
  row(name, "JIT (ag::function, allocates its output)", t_jit, ratio_str(t_jit / t_eigen, "Eigen"));
  row(name, "Eigen fixed-size Matrix product + tanh (preallocated output)", t_eigen);
}

void w2(int reps) {
  auto jit = ag::function(bench::collatz);
  const ag::Tensor n(27);
  volatile int start = 27;
  const auto [t_jit, t_plain] =
      time_pair_ns([&] { keep(jit(n)); }, 20000, [&] { keep(bench::collatz_plain(start)); }, 20000, 3 * reps);
  const char* w = "W2 Collatz steps from 27 (staged while + if)";
  row(w, "JIT (ag::function)", t_jit, ratio_str(t_jit / t_plain, "plain C++"), "<= 1.1x: " + verdict(t_jit / t_plain <= 1.1));
  row(w, "plain C++ on int", t_plain);
}

void w3(int reps, int64_t n) {
  const ag::Tensor x = ag::random_uniform({n}, ag::float32, -3, 3, 2);
  std::vector<float> y(static_cast<size_t>(n)), b(static_cast<size_t>(n), 1.0f), c(static_cast<size_t>(n), 2.0f);
  const int iters = n >= (1 << 24) ? 3 : 30;
  const double t_triad = time_ns([&] { bench::stream_triad(y.data(), b.data(), c.data(), n, 3.0f); keep(y[0]); }, iters, reps);
  const ag::detail::ScopedNumThreads restore(ag::get_num_threads());  // the rows below set 1 or 2
  // The same triad split over two threads of agc's pool: what two cores' bandwidth allows.
  ag::set_num_threads(2);
  const double t_triad2 = time_ns(
      [&] {
        ag::detail::parallel_for(n, 1 << 16, [&](int64_t lo, int64_t hi) {
          bench::stream_triad(y.data() + lo, b.data() + lo, c.data() + lo, hi - lo, 3.0f);
        });
        keep(y[0]);
      },
      iters, reps);
  const double triad_gbs = 12.0 * static_cast<double>(n) / t_triad;
  // y = 3x stored around the cache into a buffer of agc's allocator (huge pages, as the JIT's
  // results), on 1 and 2 threads: the roofline of a one-input chain on tensors far past the
  // cache (the triad's cached stores read each line before writing it).
  const ag::Tensor scaled = ag::detail::make_tensor(ag::float32, ag::Shape{n});
  float* ps = const_cast<float*>(scaled.data<float>());
  const double t_scale = time_ns([&] { bench::stream_scale_nontemporal(x.data<float>(), ps, n, 3.0f); keep(ps[0]); }, iters, reps);
  const double t_scale2 = time_ns(
      [&] {
        ag::detail::parallel_for(n / 16, 1 << 12, [&](int64_t lo, int64_t hi) {
          bench::stream_scale_nontemporal(x.data<float>() + 16 * lo, ps + 16 * lo, 16 * (hi - lo), 3.0f);
        });
        keep(ps[0]);
      },
      iters, reps);
  const double scale_gbs = 8.0 * static_cast<double>(n) / t_scale, scale_gbs2 = 8.0 * static_cast<double>(n) / t_scale2;
  const float* px = x.data<float>();
  struct Chain {
    const char* name;
    ag::Tensor (*fn)(ag::Tensor);
    void (*plain)(const float*, float*, int64_t, float, float, float);
    void (*eigen)(const float*, float*, int64_t, float, float, float);
    double two_thread_target;  // the speed-up over one thread (16M)
    bool plain_loop_target;    // 1M (cache-resident): the issue asks <= 1.0x the plain loop on 1 thread
  };
  const Chain chains[] = {
      {"relu(x*a+b)*c - tanh(x)", bench::tanh_chain, bench::tanh_chain_plain, bench::tanh_chain_eigen, 1.6, false},
      {"maximum(x*a+b, 0)*c + x", bench::cheap_chain, bench::cheap_chain_plain, bench::cheap_chain_eigen, 1.3, true}};
  for (const Chain& ch : chains) {
    auto jit = ag::function(ch.fn);
    ag::set_num_threads(1);
    const double t_jit = time_ns([&] { keep(jit(x)); }, iters, reps);
    ag::set_num_threads(2);
    const double t_jit2 = time_ns([&] { keep(jit(x)); }, iters, reps);
    const double t_eigen = time_ns([&] { ch.eigen(px, y.data(), n, bench::kA, bench::kB, bench::kC); keep(y[0]); }, iters, reps);
    const double t_plain = time_ns([&] { ch.plain(px, y.data(), n, bench::kA, bench::kB, bench::kC); keep(y[0]); }, iters, reps);
    const double best = std::min(t_eigen, t_plain);
    const double jit_gbs = 8.0 * static_cast<double>(n) / t_jit;
    char w[160], bw[160], sp[192];
    std::snprintf(w, sizeof w, "W3 %s, %lldM float32", ch.name, static_cast<long long>(n >> 20));
    std::snprintf(bw, sizeof bw, "%.2fx best baseline, %.0f%% of 1-thread triad bandwidth, %.0f%% of the streaming scale's",
                  best / t_jit, 100 * jit_gbs / triad_gbs, 100 * jit_gbs / scale_gbs);
    // The targets: 16M, >= 90% of the 1-thread roofline (the triad's bandwidth) and a
    // 2-thread speed-up; 1M cheap chain, <= 1.0x the plain loop. Other cells: no target.
    const bool large = n >= (1 << 24);
    std::string target1;
    if (large) target1 = ">= 90% of triad bandwidth: " + verdict(jit_gbs >= 0.9 * triad_gbs);
    else if (ch.plain_loop_target) target1 = "<= 1.0x plain loop: " + verdict(t_jit <= t_plain);
    row(w, "JIT, 1 thread (ag::function, allocates its output)", t_jit,
        std::string(bw) + "; " + ratio_str(t_jit / t_plain, "plain loop"), target1);
    std::snprintf(sp, sizeof sp, "%.2fx the 1-thread speed; %.2fx the plain loop's time; %.0f%% of the 2-thread streaming scale's bandwidth",
                  t_jit / t_jit2, t_jit2 / t_plain, 100 * 8.0 * static_cast<double>(n) / t_jit2 / scale_gbs2);
    row(w, "JIT, 2 threads", t_jit2, sp,
        large ? (fmt::format(">= {:.1f}x 1-thread: ", ch.two_thread_target) + verdict(t_jit / t_jit2 >= ch.two_thread_target))
              : "");
    row(w, "Eigen array expression (preallocated output)", t_eigen);
    row(w, "plain -O3 -march=native loop (preallocated output)", t_plain);
  }
  bench::reduction_rows(reps, x, y, iters);
  char w[128];
  std::snprintf(w, sizeof w, "W3 STREAM-like triad, %lldM float32", static_cast<long long>(n >> 20));
  char gb[64];
  std::snprintf(gb, sizeof gb, "%.1f GB/s", triad_gbs);
  row(w, "a = b + s*c, 1 thread", t_triad, gb);
  std::snprintf(gb, sizeof gb, "%.1f GB/s, %.2fx the 1-thread speed", 12.0 * static_cast<double>(n) / t_triad2, t_triad / t_triad2);
  row(w, "a = b + s*c, 2 threads (agc's pool)", t_triad2, gb);
  std::snprintf(w, sizeof w, "W3 streaming scale y = s*x (non-temporal stores), %lldM float32", static_cast<long long>(n >> 20));
  std::snprintf(gb, sizeof gb, "%.1f GB/s", scale_gbs);
  row(w, "1 thread", t_scale, gb);
  std::snprintf(gb, sizeof gb, "%.1f GB/s, %.2fx the 1-thread speed", scale_gbs2, t_scale / t_scale2);
  row(w, "2 threads (agc's pool)", t_scale2, gb);
}

// ---- W5: first calls, in this process and in fresh processes with a disk cache ----

ag::Tensor w5_input(const std::string& name) {
  if (name == "power") return ag::random_uniform({10, 10}, ag::int32, -2, 3, 1);
  if (name == "collatz") return ag::Tensor(27);
  if (name == "trivial") return ag::constant({1.0f});
  return ag::random_uniform({1 << 20}, ag::float32, -3, 3, 2);
}

ag::Tensor (*w5_fn(const std::string& name))(ag::Tensor) {
  if (name == "power") return bench::power;
  if (name == "collatz") return bench::collatz;
  if (name == "trivial") return bench::trivial;
  return bench::tanh_chain;
}

// Child mode: time the first call of one workload in this fresh process; `after`: 50 ms after
// the Function was created (an application's start-up: the JIT's warm-up has run meanwhile).
int first_call(const std::string& name, bool tiered, bool after) {
  const ag::Tensor x = w5_input(name);
  auto f = ag::function(w5_fn(name), {.tiered = tiered});
  if (after) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto t0 = Clock::now();
  keep(f(x));
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  // Calls 2 to 5: a later call that stalls (work deferred past the first call) shows here; then
  // the cached call it is compared with (the best of 20 more).
  double later[4];
  auto timed_call = [&] {
    const auto t1 = Clock::now();
    keep(f(x));
    return std::chrono::duration<double, std::milli>(Clock::now() - t1).count();
  };
  for (double& t : later) t = timed_call();
  double cached = 1e300;
  for (int k = 0; k < 20; ++k) cached = std::min(cached, timed_call());
  std::printf("first_ms=%.3f second_ms=%.4f third_ms=%.4f fourth_ms=%.4f fifth_ms=%.4f cached_ms=%.5f compiles=%lld disk_hits=%lld\n",
              ms, later[0], later[1], later[2], later[3], cached, static_cast<long long>(f.stats().compiles),
              static_cast<long long>(f.stats().disk_hits));
  return 0;
}

struct Child {
  double first_ms = -1, second_ms = -1;
  double slowest_later_ms = -1;  // the slowest of calls 2 to 5
  double cached_ms = -1;         // the best of calls 6 to 25
  long long compiles = -1, disk_hits = -1;
};

Child run_child(const std::string& self, const std::string& name, const std::string& dir, const std::string& mode = "",
                const std::string& env = "") {
  const std::string cmd = env + " AG_CACHE_DIR='" + dir + "' '" + self + "' --first-call " + name + " " + mode;
  Child c;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    double later[3];
    if (std::fscanf(p, "first_ms=%lf second_ms=%lf third_ms=%lf fourth_ms=%lf fifth_ms=%lf cached_ms=%lf compiles=%lld disk_hits=%lld",
                    &c.first_ms, &c.second_ms, &later[0], &later[1], &later[2], &c.cached_ms, &c.compiles, &c.disk_hits) != 8)
      c.first_ms = -1;
    c.slowest_later_ms = std::max({c.second_ms, later[0], later[1], later[2]});
    ::pclose(p);
  }
  return c;
}

void w5(const std::string& self) {
  namespace fs = std::filesystem;
  const std::string dir = (fs::temp_directory_path() / ("agc-bench-cache-" + std::to_string(::getpid()))).string();
  for (const char* name : {"power", "collatz", "tanh_chain", "trivial"}) {
    // In this (warm) process: the engine exists; only trace + optimize + codegen. Each new
    // Function traces and compiles again (the disk cache is off): the best of 3.
    ::setenv("AG_CACHE_DIR", "off", 1);
    const ag::Tensor x = w5_input(name);
    double warm_ms = 1e300;
    for (int rep = 0; rep < 3; ++rep) {
      auto f = ag::function(w5_fn(name));
      const auto t0 = Clock::now();
      keep(f(x));
      warm_ms = std::min(warm_ms, std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    // Fresh processes, the best of 5 of each kind, interleaved (this VM's noise comes in phases):
    // the first compiles (and creates the LLJIT), the second loads from disk; tiered; the first
    // call 50 ms after the Function was created, with the JIT's warm-up (the default) and without.
    double cold = 1e300, disk = 1e300, disk_second = 0, tiered = 1e300, later = 1e300, later_cold = 1e300;
    double stall = 0, stall_cached = 1;  // the slowest of calls 2-5 over every fresh compiling process, its cached call
    bool hit = true;
    for (int rep = 0; rep < 5; ++rep) {
      fs::remove_all(dir);
      const Child a = run_child(self, name, dir);
      const Child b = run_child(self, name, dir);
      cold = std::min(cold, a.first_ms);
      if (a.slowest_later_ms > stall) stall = a.slowest_later_ms, stall_cached = a.cached_ms;
      if (b.first_ms < disk) disk = b.first_ms, disk_second = b.second_ms;
      hit = hit && a.compiles == 1 && b.disk_hits == 1 && b.compiles == 0;
      fs::remove_all(dir);
      tiered = std::min(tiered, run_child(self, name, dir, "tiered").first_ms);
      fs::remove_all(dir);
      later = std::min(later, run_child(self, name, dir, "after").first_ms);
      fs::remove_all(dir);
      later_cold = std::min(later_cold, run_child(self, name, dir, "after", "AG_JIT_WARMUP=0").first_ms);
    }
    char w[96];
    std::snprintf(w, sizeof w, "W5 first call: %s", name);
    row(w, "trace + optimize + codegen (warm process)", warm_ms * 1e6, "", "<= 20 ms: " + verdict(warm_ms <= 20));
    row(w, "same in a new process, empty disk cache (incl. LLJIT setup)", cold * 1e6, "", "<= 10 ms: " + verdict(cold <= 10));
    row(w, "same, called 50 ms after the Function was created (the JIT warmed up meanwhile)", later * 1e6,
        fmt::format("{:.2f}x without the warm-up", later / later_cold), "<= 10 ms: " + verdict(later <= 10));
    row(w, "same without the warm-up (AG_JIT_WARMUP=0)", later_cold * 1e6);
    // A stall is deferred work (a compile finishing late): what the issue bounds is 10x a cached
    // call; a call of a few microseconds also misses caches on its second run, hence 0.5 ms.
    row(w, "the slowest of calls 2-5 in those processes (work deferred past the first call shows here)", stall * 1e6,
        fmt::format("{:.1f}x that process's cached call ({:.2f} us)", stall / stall_cached, stall_cached * 1e3),
        "<= 10x a cached call or <= 0.5 ms: " + verdict(stall <= 10 * stall_cached || stall <= 0.5));
    row(w, "new process, empty disk cache, tiered (interpreter while compiling)", tiered * 1e6,
        fmt::format("{:.2f}x the compiled first call", cold / tiered), "<= 10 ms: " + verdict(tiered <= 10));
    // The first call also runs the function once (the tanh chain: 1M elements into a fresh
    // output); first minus second call is the load itself.
    char extra[96];
    std::snprintf(extra, sizeof extra, "%s; load = first - second call: %.2f ms", hit ? "disk hit, no codegen" : "NO disk hit",
                  disk - disk_second);
    row(w, "new process, from the disk cache", disk * 1e6, extra, "<= 2 ms: " + verdict(disk <= 2 && hit));
  }
  fs::remove_all(dir);
  ::setenv("AG_CACHE_DIR", "off", 1);
}

void w6(int reps) {
  constexpr int64_t kBatches = 100;
  ag::random::Generator g_jit(1), g_interp(1), g_eager(1);
  auto jit = ag::function([&](const ag::Tensor& n) { return bench::estimate_pi(g_jit, n); });
  auto interp = ag::function([&](const ag::Tensor& n) { return bench::estimate_pi(g_interp, n); }, {.jit_compile = false});
  const ag::Tensor batches(static_cast<int>(kBatches));
  const double t_jit = time_ns([&] { keep(jit(batches)); }, 3, reps);
  const double t_interp = time_ns([&] { keep(interp(batches)); }, 3, reps);
  const double t_eager = time_ns([&] { keep(bench::estimate_pi(g_eager, batches)); }, 3, reps);
  const double t_plain = time_ns([&] { keep(bench::estimate_pi_plain(1, kBatches * bench::kPiBatch)); }, 3, reps);
  // The same 200 draws as compiled code ran them when the op-table issue was filed: each went
  // through agc_rt_eval to the eager kernel, which allocated a tensor, filled it with the
  // stream's loop as the library's baseline ISA compiles it (the narrowest kernel level here),
  // and was copied into the JIT's buffer. (A lower bound of that path: its type inference, input
  // vector and lock are left out.) The JIT row's time, draws and the rest, bounds today's draws.
  const ag::detail::KernelSet& narrowest = *ag::detail::built_kernel_sets().front();
  std::vector<float> jit_buffer(bench::kPiBatch);
  uint64_t counter = 0;
  const double t_old_draws = time_ns(
      [&] {
        for (int64_t d = 0; d < 2 * kBatches; ++d) {
          auto drawn = std::make_unique<float[]>(bench::kPiBatch);
          narrowest.random_fill(ag::float32, drawn.get(), bench::kPiBatch, false, 1, counter, 0.0, 1.0);
          counter += bench::kPiBatch;
          std::memcpy(jit_buffer.data(), drawn.get(), sizeof(float) * bench::kPiBatch);
          keep(jit_buffer.data());
        }
      },
      3, reps);
  const char* w = "W6 Monte Carlo pi, 100 batches of 10000 points";
  row(w, "JIT (ag::function + ag::random::Generator)", t_jit, ratio_str(t_plain / t_jit, "the plain loop's speed"));
  row(w, "graph interpreter", t_interp, ratio_str(t_interp / t_jit, "JIT"));
  row(w, "eager", t_eager, ratio_str(t_eager / t_jit, "JIT"));
  row(w, "plain C++ loop over std::mt19937", t_plain);
  const double draw_ratio = t_old_draws / t_jit;
  const std::string old_variant =
      std::string("its draws alone, as compiled code drew them before (") + narrowest.isa + " stream loop via agc_rt_eval)";
  row(w, old_variant.c_str(), t_old_draws, ratio_str(draw_ratio, "the whole JIT call"), verdict(draw_ratio >= 3.0) + " (JIT draws >= 3x faster)");
}

// W7: the cost of one atomic variable update in compiled code (a lock, an add, an unlock in
// the helper) against the cheapest atomic update C++ has.
void w7(int reps) {
  constexpr int64_t kSteps = 1'000'000;
  ag::Variable total(int64_t{0}, "total");
  auto jit = ag::function([&](const ag::Tensor& steps) {
    ag::Tensor i = ag::Tensor(int64_t{0});
    ag::while_stmt([&] { return i < steps; },
                   [&] {
                     total.assign_add(int64_t{1});
                     i += int64_t{1};
                   },
                   ag::state(i), {"i"}, AG_SOURCE_LOC("w7.cpp", 1));
    return i;
  });
  const ag::Tensor steps(kSteps);
  std::atomic<int64_t> counter{0};
  const double t_jit = time_ns([&] { keep(jit(steps)); }, 3, reps);
  const double t_atomic = time_ns(
      [&] {
        for (int64_t k = 0; k < kSteps; ++k) counter.fetch_add(1);
        keep(counter);
      },
      3, reps);
  const char* w = "W7 staged loop of 1M Variable::assign_add (int64)";
  const double ratio = t_jit / t_atomic;
  row(w, "JIT (ag::function, while_stmt)", t_jit, ratio_str(ratio, "the atomic loop's time"), verdict(ratio <= 3.0) + " (<= 3x)");
  row(w, "plain C++ loop of std::atomic<int64_t>::fetch_add", t_atomic);
}

// W8: a training step compiled into one Function (the guide's train_step: forward, backward and
// the SGD update), against the same step written by hand with Eigen in the same run; the eager
// tape's cost per recorded op; the first call (trace + backward + compile).
ag::Tensor softmax_cross_entropy(const ag::Tensor& logits, const ag::Tensor& labels) {
  const ag::Tensor shifted = logits - ag::stop_gradient(ag::reduce_max(logits, 1, true));
  const ag::Tensor log_softmax = shifted - ag::log(ag::reduce_sum(ag::exp(shifted), 1, true));
  return -ag::reduce_mean(ag::reduce_sum(labels * log_softmax, 1));
}

void w8(int reps) {
  constexpr int64_t kBatch = 64;
  constexpr float kLr = 0.01f;
  const ag::Tensor x = ag::random_uniform({kBatch, 784}, ag::float32, 0, 1, 1);
  std::vector<float> onehot(kBatch * 10, 0.0f);
  for (int64_t i = 0; i < kBatch; ++i) onehot[static_cast<size_t>(i * 10 + (i * 7) % 10)] = 1.0f;
  const ag::Tensor y = ag::constant(onehot, {kBatch, 10});
  ag::Variable w1(ag::random_normal({784, 256}, ag::float32, 0, 0.05, 2), "w1"), b1(ag::zeros({256}), "b1");
  ag::Variable w2(ag::random_normal({256, 10}, ag::float32, 0, 0.05, 3), "w2"), b2(ag::zeros({10}), "b2");
  // The Eigen baseline starts from the same weights.
  std::vector<float> ew1 = w1.value().to_vector<float>(), eb1(256, 0.0f), ew2 = w2.value().to_vector<float>(), eb2(10, 0.0f);
  ag::optimizers::SGD sgd(kLr);
  auto body = [&](ag::Tensor xs, ag::Tensor ys) {
    ag::GradientTape tape;
    const ag::Tensor h = ag::relu(ag::matmul(xs, w1) + b1);
    const ag::Tensor loss = softmax_cross_entropy(ag::matmul(h, w2) + b2, ys);
    const std::vector<ag::Tensor> g = tape.gradient(loss, {w1, b1, w2, b2});
    sgd.apply_gradients({{g[0], &w1}, {g[1], &b1}, {g[2], &w2}, {g[3], &b2}});
    return loss;
  };
  auto step = ag::function(body, {.name = "train_step"});
  const auto t0 = Clock::now();
  keep(step(x, y));
  const double t_first = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  // One thread against the single-threaded Eigen step; then the same step on two threads.
  const ag::detail::ScopedNumThreads restore(1);
  const double t_jit = time_ns([&] { keep(step(x, y)); }, 10, reps);
  ag::set_num_threads(2);
  const double t_jit2 = time_ns([&] { keep(step(x, y)); }, 10, reps);
  ag::set_num_threads(1);
  const bench::MlpParams p{ew1.data(), eb1.data(), ew2.data(), eb2.data()};
  const std::vector<float> xv = x.to_vector<float>();
  const double t_eigen = time_ns([&] { keep(bench::mlp_sgd_step_eigen(p, xv.data(), onehot.data(), kBatch, kLr)); }, 10, reps);
  const double t_eager = time_ns([&] { keep(body(x, y)); }, 3, reps);
  // The tape's cost per recorded eager op: 200 multiplies of a 1-element tensor, with and without.
  auto chain = [&](bool taped) {
    const ag::Tensor s = ag::constant(1.0f);
    std::optional<ag::GradientTape> tape;
    if (taped) {
      tape.emplace();
      tape->watch(s);
    }
    ag::Tensor v = s;
    for (int k = 0; k < 200; ++k) v = v * 1.0001f;
    keep(v);
  };
  const double t_untaped = time_ns([&] { chain(false); }, 20, reps) / 200;
  const double t_taped = time_ns([&] { chain(true); }, 20, reps) / 200;

  const char* w = "W8 train step, MLP 784-256-10, batch 64, softmax CE, SGD";
  const double ratio = t_jit / t_eigen;
  row(w, "JIT, 1 thread (ag::function: forward + tape backward + SGD update)", t_jit, ratio_str(ratio, "hand-written Eigen"),
      verdict(ratio <= 1.3) + " (<= 1.3x)");
  row(w, "JIT, 2 threads (its products stay under the GEMM split threshold)", t_jit2, ratio_str(t_jit / t_jit2, "1-thread speed"));
  row(w, "hand-written Eigen forward + backward + update", t_eigen);
  row(w, "eager (the same body, tape and optimizer)", t_eager, ratio_str(t_eager / t_jit, "JIT"));
  row(w, "first call (trace, backward, optimize, compile)", t_first);
  const char* w2n = "W8 eager tape overhead per recorded op (x * c on 1 element)";
  row(w2n, "with a tape watching", t_taped, std::to_string(static_cast<int>(t_taped - t_untaped + 0.5)) + " ns per op above");
  row(w2n, "no tape", t_untaped);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--first-call") == 0) {
    auto has = [&](const char* mode) { return std::any_of(argv + 3, argv + argc, [&](const char* a) { return std::strcmp(a, mode) == 0; }); };
    return first_call(argv[2], has("tiered"), has("after"));
  }
  if (argc >= 3 && std::strcmp(argv[1], "--w4-call") == 0) {
    std::printf("%.3f\n", bench::w4_cached_call(std::atoi(argv[2])));
    return 0;
  }
  // jit_bench [--quick] [W1 W2 ...]: all workloads unless some are named.
  bool quick = false;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) quick = true;
    else only.emplace_back(argv[i]);
  }
  auto wanted = [&](const char* w) { return only.empty() || std::find(only.begin(), only.end(), w) != only.end(); };
  const int reps = quick ? 3 : 7;
  ::setenv("AG_CACHE_DIR", "off", 1);  // W1-W4 measure compiled code, not the cache
  std::printf("agc JIT benchmarks (min of %d repetitions; machine shared, 2 cores)\n\n", reps);
  header();
  if (wanted("W1")) w1(reps);
  if (wanted("W1") || wanted("W1b")) w1b(reps);
  if (wanted("W2")) w2(reps);
  if (wanted("W3")) w3(reps, int64_t{1} << 20), w3(quick ? 2 : reps, int64_t{1} << 24);
  const std::string self = std::filesystem::canonical("/proc/self/exe").string();
  if (wanted("W4")) bench::dispatch_rows(self, reps);
  if (wanted("W5")) w5(self);
  if (wanted("W5") || wanted("W5b")) bench::large_graph_rows(reps);
  if (wanted("W5") || wanted("W5c")) bench::shared_kernel_rows();
  if (wanted("W6")) w6(reps);
  if (wanted("W7")) {
    // glibc elides the atomics of uncontended locks while a process has never had a second
    // thread: W7 alone ran 1.7x faster than after any other workload (whose pool threads
    // exist). Measure it as every multithreaded program runs.
    std::thread([] {}).join();
    w7(reps);
  }
  if (wanted("W8")) w8(reps);
  if (wanted("W8") || wanted("W8b")) bench::gradient_rows(reps);
  return 0;
}
