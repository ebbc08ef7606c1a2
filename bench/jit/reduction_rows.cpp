// W3's reduction rows: a full reduction (fixed 128K-element chunks over the pool), row variances
// written as one expression (each row in a register, long rows and short; rows shorter than two
// vectors folded in groups), a row argmax over ten classes and column sums (fixed blocks of rows
// with partial rows; lower_reduce.cpp), each on 1 and 2 threads next to Eigen or a plain loop.
#include "reduction_rows.h"

#include <cstdio>

#include "ag/ag.h"
#include "baselines.h"
#include "table.h"
#include "workloads.h"

namespace bench {

using namespace table;

namespace {

// Times compiled reduction `f` of x (the whole float32 buffer of n elements) on 1 and 2 threads
// and prints its two rows under workload `w`, the 1-thread row against `baseline_ns`
// (`baseline`: "Eigen's" or "the plain loop's").
template <class F>
void jit_rows(const char* w, F f, const ag::Tensor& x, int64_t n, double baseline_ns, const char* baseline, int iters,
              int reps) {
  auto jit = ag::function(f);
  ag::set_num_threads(1);
  const double t_jit = time_ns([&] { keep(jit(x)); }, iters, reps);
  ag::set_num_threads(2);
  const double t_jit2 = time_ns([&] { keep(jit(x)); }, iters, reps);
  char r1[96], r2[96];
  std::snprintf(r1, sizeof r1, "%.2fx %s time, %.1f GB/s read", t_jit / baseline_ns, baseline, 4.0 * static_cast<double>(n) / t_jit);
  std::snprintf(r2, sizeof r2, "%.2fx the 1-thread speed", t_jit / t_jit2);
  row(w, "JIT, 1 thread (ag::function)", t_jit, r1);
  row(w, "JIT, 2 threads", t_jit2, r2);
}

}  // namespace

void reduction_rows(int reps, const ag::Tensor& x, std::vector<float>& y, int iters) {
  const int64_t n = x.shape()[0];
  const float* px = x.data<float>();
  {
    // A full reduction: fixed 128K-element chunks over the pool (lower_reduce.cpp).
    float sink = 0;
    const double t_eigen = time_ns([&] { sink += bench::sum_squares_eigen(px, n); keep(sink); }, iters, reps);
    const double t_plain = time_ns([&] { sink += bench::sum_squares_plain(px, n); keep(sink); }, iters, reps);
    char w[96];
    std::snprintf(w, sizeof w, "W3 reduce_sum(x*x + 1), %lldM float32", static_cast<long long>(n >> 20));
    jit_rows(w, bench::sum_squares, x, n, t_eigen, "Eigen's", iters, reps);
    row(w, "Eigen (X * X + 1).sum() (vectorized)", t_eigen);
    row(w, "plain loop, summed in order", t_plain);
  }
  // Row variances as one expression: the operand reads each row's mean repeated along the row;
  // each row accumulates in a register (lower_reduce.cpp, long_rows). Rows of 256, of 48 (3
  // AVX-512 vectors, 6 AVX2 ones: short rows with a row constant), and of 12 (3/4 of an AVX-512
  // vector, 1.5 AVX2 ones: groups of rows folded in registers, the last vector of each row read
  // under a mask; Emitter::row_vectors).
  for (const int64_t cols : {int64_t{256}, int64_t{48}, int64_t{12}}) {
    const int64_t rows = n / cols;
    const double t_eigen = time_ns([&] { bench::row_variances_eigen(px, y.data(), rows, cols); keep(y[0]); }, iters, reps);
    char w[112];
    std::snprintf(w, sizeof w, "W3 row variances reduce_mean(square(x - mean), {1}), %lldx%lld float32",
                  static_cast<long long>(rows), static_cast<long long>(cols));
    const ag::Tensor m = ag::reshape(ag::slice(x, {0}, {rows * cols}), {rows, cols});
    jit_rows(w, bench::row_variances, m, rows * cols, t_eigen, "Eigen's", iters, reps);
    row(w, "Eigen, row by row: (row - row.mean()).square().mean() (preallocated output)", t_eigen);
  }
  {
    // An argmax over ten classes (a classifier's prediction): a row's vectors, a horizontal
    // maximum, the first lane equal to it (Emitter::arg_reduce_rows).
    const int64_t cols = 10, rows = n / cols;
    std::vector<int64_t> idx(static_cast<size_t>(rows));
    const double t_eigen = time_ns([&] { bench::row_argmax_eigen(px, idx.data(), rows, cols); keep(idx[0]); }, iters, reps);
    char w[96];
    std::snprintf(w, sizeof w, "W3 row argmax argmax(x, 1), %lldx%lld float32", static_cast<long long>(rows),
                  static_cast<long long>(cols));
    const ag::Tensor m = ag::reshape(ag::slice(x, {0}, {rows * cols}), {rows, cols});
    jit_rows(w, bench::row_argmax, m, rows * cols, t_eigen, "Eigen's", iters, reps);
    row(w, "Eigen, row by row: row.maxCoeff(&index) (preallocated output)", t_eigen);
  }
  if (n < (1 << 24)) return;
  // Column reductions: fixed blocks of rows into partial rows over the pool (lower_reduce.cpp);
  // long rows, and rows of 16 (a batch norm's statistics: the columns in vector registers).
  for (const int64_t cols : {n / 4096, int64_t{16}}) {
    const int64_t rows = n / cols;
    const double t_plain = time_ns([&] { bench::column_sums_plain(px, y.data(), rows, cols); keep(y[0]); }, iters, reps);
    char w[96];
    std::snprintf(w, sizeof w, "W3 column sums reduce_sum(x, {0}), %lldx%lld float32", static_cast<long long>(rows),
                  static_cast<long long>(cols));
    jit_rows(w, bench::column_sums, ag::reshape(x, {rows, cols}), n, t_plain, "the plain loop's", iters, reps);
    row(w, "plain loop, row after row (preallocated output)", t_plain);
  }
}

}  // namespace bench
