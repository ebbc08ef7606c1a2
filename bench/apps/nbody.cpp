// An n-body simulation, 512 bodies, 20 leapfrog steps (kick, drift, kick) with softened gravity,
// in one AG_FUNCTION, as a NumPy user writes it: all pairwise differences by broadcasting
// ([1, N, 3] - [N, 1, 3]), the inverse cube distances, one reduction for the accelerations.
// Against the same by hand (the double loop over pairs), in the same run, one thread and two;
// and the first call.
//   build/bench/apps/bench_nbody [steps]
#include <ag/ag.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"

using ag::Tensor;

constexpr int64_t kBodies = 512;
constexpr float kDt = 0.01f, kSoftening2 = 0.01f;

Tensor accelerations(const Tensor& pos, const Tensor& mass) {
  const Tensor d = ag::expand_dims(pos, 0) - ag::expand_dims(pos, 1);  // d[i, j] = pos[j] - pos[i]
  const Tensor inv = ag::rsqrt(ag::reduce_sum(d * d, 2) + kSoftening2);
  return ag::reduce_sum(d * ag::expand_dims(inv * inv * inv * mass, 2), 1);
}

AG_FUNCTION Tensor simulate(Tensor pos, Tensor vel, Tensor mass, Tensor steps) {
  Tensor i = 0;
  Tensor acc = accelerations(pos, mass);
  while (i < steps) {
    vel = vel + acc * (0.5f * kDt);
    pos = pos + vel * kDt;
    acc = accelerations(pos, mass);
    vel = vel + acc * (0.5f * kDt);
    i += 1;
  }
  return ag::concat({pos, vel}, 1);
}

std::vector<float> accelerations_by_hand(const std::vector<float>& pos, const std::vector<float>& mass) {
  std::vector<float> acc(static_cast<size_t>(3 * kBodies), 0.0f);
  for (int64_t a = 0; a < kBodies; ++a) {
    float ax = 0, ay = 0, az = 0;
    const float* pa = &pos[static_cast<size_t>(3 * a)];
    for (int64_t b = 0; b < kBodies; ++b) {
      const float* pb = &pos[static_cast<size_t>(3 * b)];
      const float dx = pb[0] - pa[0], dy = pb[1] - pa[1], dz = pb[2] - pa[2];
      const float inv = 1.0f / std::sqrt(dx * dx + dy * dy + dz * dz + kSoftening2);
      const float s = inv * inv * inv * mass[static_cast<size_t>(b)];
      ax += dx * s, ay += dy * s, az += dz * s;
    }
    acc[static_cast<size_t>(3 * a)] = ax, acc[static_cast<size_t>(3 * a + 1)] = ay, acc[static_cast<size_t>(3 * a + 2)] = az;
  }
  return acc;
}

std::vector<float> simulate_by_hand(std::vector<float> pos, std::vector<float> vel, const std::vector<float>& mass, int steps) {
  std::vector<float> acc = accelerations_by_hand(pos, mass);
  for (int s = 0; s < steps; ++s) {
    for (size_t k = 0; k < vel.size(); ++k) vel[k] += acc[k] * (0.5f * kDt);
    for (size_t k = 0; k < pos.size(); ++k) pos[k] += vel[k] * kDt;
    acc = accelerations_by_hand(pos, mass);
    for (size_t k = 0; k < vel.size(); ++k) vel[k] += acc[k] * (0.5f * kDt);
  }
  std::vector<float> out;
  for (int64_t b = 0; b < kBodies; ++b) {
    out.insert(out.end(), pos.begin() + 3 * b, pos.begin() + 3 * b + 3);
    out.insert(out.end(), vel.begin() + 3 * b, vel.begin() + 3 * b + 3);
  }
  return out;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  std::vector<float> pos(static_cast<size_t>(3 * kBodies)), vel(pos.size(), 0.0f), mass(static_cast<size_t>(kBodies));
  uint32_t s = 9;
  auto uniform = [&] {
    s = s * 1664525u + 1013904223u;
    return static_cast<float>(s >> 8) / static_cast<float>(1u << 24);
  };
  for (float& p : pos) p = uniform() * 2.0f - 1.0f;
  for (float& m : mass) m = 0.5f + uniform() / static_cast<float>(kBodies);
  const Tensor tp = ag::constant(pos, {kBodies, 3}), tv = ag::constant(vel, {kBodies, 3}), tm = ag::constant(mass);
  const Tensor n = ag::constant(int32_t{steps});

  // The first call in this new process, at the default thread count (as every bench/apps
  // program times it); the run times below at 1 and 2 threads.
  auto f = ag::function(simulate);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(tp, tv, tm, n);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::vector<float> theirs = simulate_by_hand(pos, vel, mass, steps), got = ours.to_vector<float>();
  float max_diff = 0;
  for (size_t k = 0; k < got.size(); ++k) max_diff = std::max(max_diff, std::abs(got[k] - theirs[k]));
  ag::set_num_threads(1);
  auto run_agc = [&] { agbench::keep(f(tp, tv, tm, n)); };
  const std::vector<double> t = agbench::time_interleaved(
      ag::set_num_threads, {{[&] { agbench::keep(simulate_by_hand(pos, vel, mass, steps)); }}, {run_agc, 1}, {run_agc, 2}});
  const double plain = t[0];
  std::vector<agbench::Row> rows;
  for (int threads : {1, 2}) {
    const double agc = t[static_cast<size_t>(threads)];
    rows.push_back({fmt::format("simulate ({} thread{})", threads, threads > 1 ? "s" : ""), agbench::ms(agc),
                    agbench::ms(plain) + " plain loop (1 thread)", fmt::format("{:.2f}x", agc / plain),
                    fmt::format("state within {:.1e} of the loop's", max_diff)});
  }
  rows.push_back({"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""});
  agbench::print_table(fmt::format("n-body: {} bodies, {} leapfrog steps", kBodies, steps), rows);
  return 0;
}
