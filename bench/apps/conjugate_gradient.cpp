// Conjugate gradients on a dense symmetric positive definite system (512 x 512, float64), until
// the residual norm falls under a tolerance: the whole solve is one AG_FUNCTION with a staged
// `while` on a tensor condition (`&&` of two tensors). Against the same algorithm by hand with
// Eigen (a dense matrix-vector product per iteration), in the same run, 1 thread and 2; and the
// first call (trace + compile).   build/bench/apps/bench_conjugate_gradient [n]
#include <ag/ag.h>

#include <Eigen/Dense>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "bench_util.h"

using ag::Tensor;

AG_FUNCTION Tensor solve(Tensor a, Tensor b, Tensor tol, Tensor max_iters) {
  Tensor x = ag::zeros_like(b);
  Tensor r = b;
  Tensor p = r;
  Tensor rs = ag::reduce_sum(r * r);
  Tensor i = 0;
  while (i < max_iters && rs > tol * tol) {
    Tensor ap = ag::matmul(a, p);
    Tensor alpha = rs / ag::reduce_sum(p * ap);
    x = x + alpha * p;
    r = r - alpha * ap;
    Tensor rs_next = ag::reduce_sum(r * r);
    p = r + (rs_next / rs) * p;
    rs = rs_next;
    i += 1;
  }
  return x;
}

using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vec = Eigen::VectorXd;

Vec solve_eigen(const Mat& a, const Vec& b, double tol, int max_iters, int* iterations) {
  Vec x = Vec::Zero(b.size()), r = b, p = r, ap(b.size());
  double rs = r.squaredNorm();
  int i = 0;
  while (i < max_iters && rs > tol * tol) {
    ap.noalias() = a * p;
    const double alpha = rs / p.dot(ap);
    x += alpha * p;
    r -= alpha * ap;
    const double rs_next = r.squaredNorm();
    p = r + (rs_next / rs) * p;
    rs = rs_next;
    ++i;
  }
  *iterations = i;
  return x;
}

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 512;
  const double tol = 1e-8;
  const int max_iters = 1000;
  std::srand(5);
  // A = M^T M / n + 0.005 I: symmetric positive definite, condition number about 70: ~100 iterations.
  Mat m(n, n);
  for (int64_t k = 0; k < m.size(); ++k) m.data()[k] = static_cast<double>(std::rand()) / RAND_MAX - 0.5;
  const Mat a = m.transpose() * m / static_cast<double>(n) + 0.005 * Mat::Identity(n, n);
  Vec b(n);
  for (int64_t k = 0; k < n; ++k) b(k) = static_cast<double>(std::rand()) / RAND_MAX;
  const Tensor ta = ag::constant(std::vector<double>(a.data(), a.data() + a.size()), {n, n});
  const Tensor tb = ag::constant(std::vector<double>(b.data(), b.data() + b.size()), {n, 1});
  const Tensor ttol = ag::constant(tol), titers = ag::constant(int32_t{max_iters});

  auto f = ag::function(solve);
  Eigen::setNbThreads(1);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(ta, tb, ttol, titers);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The first call runs at the default thread count (the compile's second module uses the
  // pool's second thread); the run-time comparison below at one thread unless said.
  ag::set_num_threads(1);
  int iterations = 0;
  const Vec theirs = solve_eigen(a, b, tol, max_iters, &iterations);
  double max_diff = 0;
  const std::vector<double> x = ours.to_vector<double>();
  for (int64_t k = 0; k < n; ++k) max_diff = std::max(max_diff, std::abs(x[static_cast<size_t>(k)] - theirs(k)));
  if (max_diff > 1e-6) std::printf("warning: the solutions differ by %g\n", max_diff);

  std::vector<agbench::Row> rows;
  auto run_agc = [&] { agbench::keep(f(ta, tb, ttol, titers)); };
  auto run_eigen = [&] {
    int its = 0;
    agbench::keep(solve_eigen(a, b, tol, max_iters, &its));
  };
  auto set_threads = [](int threads) {
    ag::set_num_threads(threads);
    Eigen::setNbThreads(threads);
  };
  const std::vector<double> t = agbench::time_interleaved(set_threads, {{run_eigen, 1}, {run_agc, 1}, {run_eigen, 2}, {run_agc, 2}});
  for (int threads : {1, 2}) {
    const double eigen = t[threads == 1 ? 0 : 2], agc = t[threads == 1 ? 1 : 3];
    rows.push_back({fmt::format("solve, {} thread{}", threads, threads > 1 ? "s" : ""), agbench::ms(agc), agbench::ms(eigen) + " Eigen",
                    fmt::format("{:.2f}x", agc / eigen), fmt::format("{:.1f} us per iteration", agc / iterations * 1e6)});
  }
  rows.push_back({"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""});
  agbench::print_table(fmt::format("Conjugate gradients: dense SPD {} x {}, float64, {} iterations to |r| < {:g}; solutions within "
                                   "{:.1e}",
                                   n, n, iterations, tol, max_diff),
                       rows);
  return 0;
}
