// Adaptive Runge-Kutta (Dormand-Prince 5(4), the method of ode45 and scipy's RK45) on the
// Lorenz-96 system of 4096 variables, dx_i/dt = (x_{i+1} - x_{i-2}) x_{i-1} - x_i + F (periodic),
// integrated to t = 2 as one AG_FUNCTION: a staged `while (t < t_end)` whose step is accepted
// or rejected by an `if` on the error norm, the step size adapted from it. Against the same
// integrator by hand in C++ (loops over the variables, the ends of the ring apart), in the same run,
// one thread (agc on 1 and 2); and the first call (trace + compile).
//   build/bench/apps/bench_runge_kutta [n] [t_end]
#include <ag/ag.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"

using ag::Tensor;

constexpr double kForcing = 8.0;
constexpr double kRtol = 1e-6, kAtol = 1e-9;

// Dormand-Prince coefficients (the 5th-order solution's weights b, the error weights e = b - b*).
constexpr double a21 = 1.0 / 5;
constexpr double a31 = 3.0 / 40, a32 = 9.0 / 40;
constexpr double a41 = 44.0 / 45, a42 = -56.0 / 15, a43 = 32.0 / 9;
constexpr double a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561, a54 = -212.0 / 729;
constexpr double a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176, a65 = -5103.0 / 18656;
constexpr double b1 = 35.0 / 384, b3 = 500.0 / 1113, b4 = 125.0 / 192, b5 = -2187.0 / 6784, b6 = 11.0 / 84;
constexpr double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200, e6 = 22.0 / 525,
                 e7 = -1.0 / 40;

// roll(x, k, 0)[i] = x[i - k] around the ring.
Tensor lorenz96(const Tensor& x) { return (ag::roll(x, -1, 0) - ag::roll(x, 2, 0)) * ag::roll(x, 1, 0) - x + kForcing; }

AG_FUNCTION Tensor integrate(Tensor x, Tensor t_end, Tensor h0) {
  Tensor t = ag::constant(0.0), h = h0, k1 = lorenz96(x);
  while (t < t_end) {
    h = ag::minimum(h, t_end - t);
    Tensor k2 = lorenz96(x + h * (a21 * k1));
    Tensor k3 = lorenz96(x + h * (a31 * k1 + a32 * k2));
    Tensor k4 = lorenz96(x + h * (a41 * k1 + a42 * k2 + a43 * k3));
    Tensor k5 = lorenz96(x + h * (a51 * k1 + a52 * k2 + a53 * k3 + a54 * k4));
    Tensor k6 = lorenz96(x + h * (a61 * k1 + a62 * k2 + a63 * k3 + a64 * k4 + a65 * k5));
    Tensor y = x + h * (b1 * k1 + b3 * k3 + b4 * k4 + b5 * k5 + b6 * k6);
    Tensor k7 = lorenz96(y);
    Tensor err_vec = h * (e1 * k1 + e3 * k3 + e4 * k4 + e5 * k5 + e6 * k6 + e7 * k7);
    Tensor scale = kAtol + kRtol * ag::maximum(ag::abs(x), ag::abs(y));
    Tensor err = ag::sqrt(ag::reduce_mean(ag::square(err_vec / scale)));
    if (err <= 1.0) {  // accepted: first same as last, k7 is the next step's k1
      t = t + h;
      x = y;
      k1 = k7;
    }
    h = h * ag::clip_by_value(0.9 * ag::pow(ag::maximum(err, 1e-10), -0.2), 0.2, 5.0);
  }
  return x;
}

// The same integrator by hand: the interior of the ring with direct indices (a loop the
// compiler vectorizes), the three elements whose neighbours wrap around with periodic ones.
void lorenz96_by_hand(const std::vector<double>& x, std::vector<double>& dx) {
  const auto n = static_cast<int64_t>(x.size());
  const double* p = x.data();
  double* d = dx.data();
  for (int64_t i = 2; i < n - 1; ++i) d[i] = (p[i + 1] - p[i - 2]) * p[i - 1] - p[i] + kForcing;
  auto at = [&](int64_t i) { return p[(i + n) % n]; };
  for (int64_t i : {int64_t{0}, int64_t{1}, n - 1}) d[i] = (at(i + 1) - at(i - 2)) * at(i - 1) - at(i) + kForcing;
}

std::vector<double> integrate_by_hand(std::vector<double> x, double t_end, double h, int* steps) {
  const size_t n = x.size();
  std::vector<double> k1(n), k2(n), k3(n), k4(n), k5(n), k6(n), k7(n), s(n), y(n);
  lorenz96_by_hand(x, k1);
  double t = 0;
  *steps = 0;
  while (t < t_end) {
    h = std::min(h, t_end - t);
    for (size_t i = 0; i < n; ++i) s[i] = x[i] + h * (a21 * k1[i]);
    lorenz96_by_hand(s, k2);
    for (size_t i = 0; i < n; ++i) s[i] = x[i] + h * (a31 * k1[i] + a32 * k2[i]);
    lorenz96_by_hand(s, k3);
    for (size_t i = 0; i < n; ++i) s[i] = x[i] + h * (a41 * k1[i] + a42 * k2[i] + a43 * k3[i]);
    lorenz96_by_hand(s, k4);
    for (size_t i = 0; i < n; ++i) s[i] = x[i] + h * (a51 * k1[i] + a52 * k2[i] + a53 * k3[i] + a54 * k4[i]);
    lorenz96_by_hand(s, k5);
    for (size_t i = 0; i < n; ++i) s[i] = x[i] + h * (a61 * k1[i] + a62 * k2[i] + a63 * k3[i] + a64 * k4[i] + a65 * k5[i]);
    lorenz96_by_hand(s, k6);
    for (size_t i = 0; i < n; ++i) y[i] = x[i] + h * (b1 * k1[i] + b3 * k3[i] + b4 * k4[i] + b5 * k5[i] + b6 * k6[i]);
    lorenz96_by_hand(y, k7);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      const double e = h * (e1 * k1[i] + e3 * k3[i] + e4 * k4[i] + e5 * k5[i] + e6 * k6[i] + e7 * k7[i]);
      const double scale = kAtol + kRtol * std::max(std::abs(x[i]), std::abs(y[i]));
      sum += (e / scale) * (e / scale);
    }
    const double err = std::sqrt(sum / static_cast<double>(n));
    if (err <= 1.0) {
      t += h;
      std::swap(x, y);
      std::swap(k1, k7);
      ++*steps;
    }
    h *= std::clamp(0.9 * std::pow(std::max(err, 1e-10), -0.2), 0.2, 5.0);
  }
  return x;
}

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 4096;
  const double t_end = argc > 2 ? std::atof(argv[2]) : 2.0;
  std::vector<double> x0(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x0[static_cast<size_t>(i)] = kForcing + (i % 7 == 0 ? 0.01 * static_cast<double>(i % 13) : 0.0);
  const Tensor tx = ag::constant(x0, {n}), tend = ag::constant(t_end), th = ag::constant(1e-3);

  auto f = ag::function(integrate);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(tx, tend, th);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The first call runs at the default thread count (the compile's second module uses the
  // pool's second thread); the run-time comparison below at one thread unless said.
  ag::set_num_threads(1);

  int steps = 0;
  const std::vector<double> theirs = integrate_by_hand(x0, t_end, 1e-3, &steps);
  const std::vector<double> got = ours.to_vector<double>();
  double max_diff = 0;
  for (size_t i = 0; i < got.size(); ++i) max_diff = std::max(max_diff, std::abs(got[i] - theirs[i]));
  if (max_diff > 1e-6) std::printf("warning: the states differ by %g\n", max_diff);

  auto run_agc = [&] { agbench::keep(f(tx, tend, th)); };
  const std::vector<double> t = agbench::time_interleaved(ag::set_num_threads, {{[&] {
                                                                                  int s = 0;
                                                                                  agbench::keep(integrate_by_hand(x0, t_end, 1e-3, &s));
                                                                                }},
                                                                                {run_agc, 1},
                                                                                {run_agc, 2}});
  const double by_hand = t[0];
  std::vector<agbench::Row> rows;
  for (int threads : {1, 2}) {
    const double agc = t[static_cast<size_t>(threads)];
    rows.push_back({fmt::format("integrate, {} thread{}", threads, threads > 1 ? "s" : ""), agbench::ms(agc),
                    agbench::ms(by_hand) + " by hand", fmt::format("{:.2f}x", agc / by_hand),
                    threads == 1 ? fmt::format("{} accepted steps; state within {:.1e} of the loop's", steps, max_diff)
                                 : "the loop on 1 thread"});
  }
  rows.push_back({"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""});
  agbench::print_table(fmt::format("Adaptive Runge-Kutta (Dormand-Prince 5(4)) on Lorenz-96, {} variables, float64, to t = {}", n, t_end),
                       rows);
  return 0;
}
