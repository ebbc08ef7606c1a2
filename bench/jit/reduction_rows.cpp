// W3's reduction rows: a full reduction (fixed 128K-element chunks over the pool), row variances
// written as one expression (each row in a register) and column sums (fixed blocks of rows with
// partial rows; lower_reduce.cpp), each on 1 and 2 threads next to Eigen's vectorized sum or a
// plain loop.
#include "reduction_rows.h"

#include <cstdio>

#include "ag/ag.h"
#include "baselines.h"
#include "table.h"
#include "workloads.h"

namespace bench {

using namespace table;

void reduction_rows(int reps, const ag::Tensor& x, std::vector<float>& y, int iters) {
  const int64_t n = x.shape()[0];
  const float* px = x.data<float>();
  {
    // A full reduction: fixed 128K-element chunks over the pool (lower_reduce.cpp).
    auto jit = ag::function(bench::sum_squares);
    ag::set_num_threads(1);
    const double t_jit = time_ns([&] { keep(jit(x)); }, iters, reps);
    ag::set_num_threads(2);
    const double t_jit2 = time_ns([&] { keep(jit(x)); }, iters, reps);
    float sink = 0;
    const double t_eigen = time_ns([&] { sink += bench::sum_squares_eigen(px, n); keep(sink); }, iters, reps);
    const double t_plain = time_ns([&] { sink += bench::sum_squares_plain(px, n); keep(sink); }, iters, reps);
    char w[96], r1[96], r2[96];
    std::snprintf(w, sizeof w, "W3 reduce_sum(x*x + 1), %lldM float32", static_cast<long long>(n >> 20));
    std::snprintf(r1, sizeof r1, "%.2fx Eigen's time, %.1f GB/s read", t_jit / t_eigen, 4.0 * static_cast<double>(n) / t_jit);
    std::snprintf(r2, sizeof r2, "%.2fx the 1-thread speed", t_jit / t_jit2);
    row(w, "JIT, 1 thread (ag::function)", t_jit, r1);
    row(w, "JIT, 2 threads", t_jit2, r2);
    row(w, "Eigen (X * X + 1).sum() (vectorized)", t_eigen);
    row(w, "plain loop, summed in order", t_plain);
  }
  {
    // Row variances as one expression: the operand reads each row's mean repeated along the row;
    // each row accumulates in a register (lower_reduce.cpp, long_rows). Rows of 256.
    const int64_t cols = 256, rows = n / cols;
    const ag::Tensor m = ag::reshape(x, {rows, cols});
    auto jit = ag::function(bench::row_variances);
    ag::set_num_threads(1);
    const double t_jit = time_ns([&] { keep(jit(m)); }, iters, reps);
    ag::set_num_threads(2);
    const double t_jit2 = time_ns([&] { keep(jit(m)); }, iters, reps);
    const double t_eigen = time_ns([&] { bench::row_variances_eigen(px, y.data(), rows, cols); keep(y[0]); }, iters, reps);
    char w[112], r1[96], r2[96];
    std::snprintf(w, sizeof w, "W3 row variances reduce_mean(square(x - mean), {1}), %lldx%lld float32",
                  static_cast<long long>(rows), static_cast<long long>(cols));
    std::snprintf(r1, sizeof r1, "%.2fx Eigen's time, %.1f GB/s read", t_jit / t_eigen, 4.0 * static_cast<double>(n) / t_jit);
    std::snprintf(r2, sizeof r2, "%.2fx the 1-thread speed", t_jit / t_jit2);
    row(w, "JIT, 1 thread (ag::function)", t_jit, r1);
    row(w, "JIT, 2 threads", t_jit2, r2);
    row(w, "Eigen, row by row: (row - row.mean()).square().mean() (preallocated output)", t_eigen);
  }
  if (n < (1 << 24)) return;
  // Column reductions: fixed blocks of rows into partial rows over the pool (lower_reduce.cpp);
  // long rows, and rows of 16 (a batch norm's statistics: the columns in vector registers).
  for (const int64_t cols : {n / 4096, int64_t{16}}) {
    const int64_t rows = n / cols;
    const ag::Tensor m = ag::reshape(x, {rows, cols});
    auto jit = ag::function(bench::column_sums);
    ag::set_num_threads(1);
    const double t_jit = time_ns([&] { keep(jit(m)); }, iters, reps);
    ag::set_num_threads(2);
    const double t_jit2 = time_ns([&] { keep(jit(m)); }, iters, reps);
    const double t_plain = time_ns([&] { bench::column_sums_plain(px, y.data(), rows, cols); keep(y[0]); }, iters, reps);
    char w[96], r1[96], r2[96];
    std::snprintf(w, sizeof w, "W3 column sums reduce_sum(x, {0}), %lldx%lld float32", static_cast<long long>(rows),
                  static_cast<long long>(cols));
    std::snprintf(r1, sizeof r1, "%.2fx the plain loop's time, %.1f GB/s read", t_jit / t_plain,
                  4.0 * static_cast<double>(n) / t_jit);
    std::snprintf(r2, sizeof r2, "%.2fx the 1-thread speed", t_jit / t_jit2);
    row(w, "JIT, 1 thread (ag::function)", t_jit, r1);
    row(w, "JIT, 2 threads", t_jit2, r2);
    row(w, "plain loop, row after row (preallocated output)", t_plain);
  }
}

}  // namespace bench
