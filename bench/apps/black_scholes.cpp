// Black-Scholes prices of European calls and puts, the classic elementwise benchmark of array
// compilers (Numba's, Halide's): per option a log, a square root, two exponentials and two
// normal CDFs by erf. In one AG_FUNCTION as a NumPy user writes it, against the same formula
// with Eigen arrays (vectorized log, exp, sqrt and erf) and as a plain C++ loop with <cmath>
// (scalar calls into libm: clang does not vectorize them at -O3 -march=native), in the same run,
// one thread (agc on 1 and 2); and the first call (trace + compile).
//   build/bench/apps/bench_black_scholes [options]
#include <ag/ag.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <vector>

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include "bench_util.h"

using ag::Tensor;

constexpr float kRate = 0.02f, kVolatility = 0.30f;
constexpr float kInvSqrt2 = 0.70710678118654752f;

AG_FUNCTION std::tuple<Tensor, Tensor> price(Tensor spot, Tensor strike, Tensor years) {
  Tensor vol_sqrt_t = kVolatility * ag::sqrt(years);
  Tensor d1 = (ag::log(spot / strike) + (kRate + 0.5f * kVolatility * kVolatility) * years) / vol_sqrt_t;
  Tensor d2 = d1 - vol_sqrt_t;
  Tensor cdf1 = 0.5f * (1.0f + ag::erf(d1 * kInvSqrt2));
  Tensor cdf2 = 0.5f * (1.0f + ag::erf(d2 * kInvSqrt2));
  Tensor discounted = strike * ag::exp(-kRate * years);
  Tensor call = spot * cdf1 - discounted * cdf2;
  Tensor put = call - spot + discounted;  // put-call parity
  return {call, put};
}

void price_by_hand(const std::vector<float>& spot, const std::vector<float>& strike, const std::vector<float>& years,
                   std::vector<float>& call, std::vector<float>& put) {
  for (size_t k = 0; k < spot.size(); ++k) {
    const float vol_sqrt_t = kVolatility * std::sqrt(years[k]);
    const float d1 = (std::log(spot[k] / strike[k]) + (kRate + 0.5f * kVolatility * kVolatility) * years[k]) / vol_sqrt_t;
    const float d2 = d1 - vol_sqrt_t;
    const float cdf1 = 0.5f * (1.0f + std::erf(d1 * kInvSqrt2)), cdf2 = 0.5f * (1.0f + std::erf(d2 * kInvSqrt2));
    const float discounted = strike[k] * std::exp(-kRate * years[k]);
    call[k] = spot[k] * cdf1 - discounted * cdf2;
    put[k] = call[k] - spot[k] + discounted;
  }
}

void price_with_eigen(const Eigen::ArrayXf& spot, const Eigen::ArrayXf& strike, const Eigen::ArrayXf& years,
                      Eigen::ArrayXf& call, Eigen::ArrayXf& put) {
  const Eigen::ArrayXf vol_sqrt_t = kVolatility * years.sqrt();
  const Eigen::ArrayXf d1 = ((spot / strike).log() + (kRate + 0.5f * kVolatility * kVolatility) * years) / vol_sqrt_t;
  const Eigen::ArrayXf d2 = d1 - vol_sqrt_t;
  const Eigen::ArrayXf discounted = strike * (-kRate * years).exp();
  call = spot * (0.5f * (1.0f + (d1 * kInvSqrt2).erf())) - discounted * (0.5f * (1.0f + (d2 * kInvSqrt2).erf()));
  put = call - spot + discounted;
}

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 1 << 20;
  std::vector<float> spot(static_cast<size_t>(n)), strike(spot.size()), years(spot.size());
  for (size_t k = 0; k < spot.size(); ++k) {
    spot[k] = 50.0f + static_cast<float>((k * 7919) % 1000) / 10.0f;
    strike[k] = 60.0f + static_cast<float>((k * 104729) % 800) / 10.0f;
    years[k] = 0.25f + static_cast<float>((k * 31) % 400) / 100.0f;
  }
  const Tensor ts = ag::constant(spot, {n}), tk = ag::constant(strike, {n}), ty = ag::constant(years, {n});

  auto f = ag::function(price);
  const auto t0 = std::chrono::steady_clock::now();
  const auto [call, put] = f(ts, tk, ty);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ag::set_num_threads(1);
  std::vector<float> their_call(spot.size()), their_put(spot.size());
  price_by_hand(spot, strike, years, their_call, their_put);
  const std::vector<float> our_call = call.to_vector<float>(), our_put = put.to_vector<float>();
  float max_diff = 0;
  for (size_t k = 0; k < spot.size(); ++k)
    max_diff = std::max({max_diff, std::abs(our_call[k] - their_call[k]), std::abs(our_put[k] - their_put[k])});
  if (max_diff > 1e-3f) std::printf("warning: the prices differ by %g\n", static_cast<double>(max_diff));

  const Eigen::ArrayXf es = Eigen::Map<const Eigen::ArrayXf>(spot.data(), n), ek = Eigen::Map<const Eigen::ArrayXf>(strike.data(), n),
                       ey = Eigen::Map<const Eigen::ArrayXf>(years.data(), n);
  Eigen::ArrayXf eigen_call(n), eigen_put(n);
  price_with_eigen(es, ek, ey, eigen_call, eigen_put);
  float eigen_diff = 0;
  for (int64_t k = 0; k < n; ++k)
    eigen_diff = std::max({eigen_diff, std::abs(eigen_call[k] - their_call[static_cast<size_t>(k)]), std::abs(eigen_put[k] - their_put[static_cast<size_t>(k)])});
  if (eigen_diff > 1e-3f) std::printf("warning: Eigen's prices differ by %g\n", static_cast<double>(eigen_diff));
  auto run_by_hand = [&] {
    price_by_hand(spot, strike, years, their_call, their_put);
    agbench::keep(their_call);
  };
  auto run_eigen = [&] {
    price_with_eigen(es, ek, ey, eigen_call, eigen_put);
    agbench::keep(eigen_call);
  };
  auto run_agc = [&] { agbench::keep(f(ts, tk, ty)); };
  const std::vector<double> t = agbench::time_interleaved(ag::set_num_threads, {{run_by_hand}, {run_eigen}, {run_agc, 1}, {run_agc, 2}});
  const double by_hand = t[0], eigen = t[1];
  std::vector<agbench::Row> rows;
  for (int threads : {1, 2}) {
    const double agc = t[static_cast<size_t>(threads) + 1];
    rows.push_back({fmt::format("price, {} thread{}", threads, threads > 1 ? "s" : ""), agbench::ms(agc), agbench::ms(eigen) + " Eigen",
                    fmt::format("{:.2f}x", agc / eigen),
                    threads == 1 ? fmt::format("{:.2f} ns per option; plain loop {} ({:.2f}x); prices within {:.1e} of the loop's",
                                               agc / static_cast<double>(n) * 1e9, agbench::ms(by_hand), agc / by_hand, max_diff)
                                 : "Eigen on 1 thread"});
  }
  rows.push_back({"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""});
  agbench::print_table(fmt::format("Black-Scholes, {} European options (call and put), float32", n), rows);
  return 0;
}
