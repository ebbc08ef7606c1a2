// Conway's Game of Life on a torus, generations in one AG_FUNCTION, written as a NumPy user
// writes it: the eight neighbours are rolls of the uint8 board along both axes (rolls of rolls
// for the diagonals), summed, and the rule is a mask cast back to uint8. Against the same rule as
// a plain C++ loop over two boards (wrapping rows with `%`, the first and last column apart), in
// the same run, one thread (agc on 1 and 2); and the first call (trace + compile).
//   build/bench/apps/bench_game_of_life [generations] [n]
#include <ag/ag.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"

using ag::Tensor;

AG_FUNCTION Tensor life(Tensor board, Tensor generations) {
  Tensor g = 0;
  while (g < generations) {
    Tensor up = ag::roll(board, 1, 0);
    Tensor down = ag::roll(board, -1, 0);
    Tensor neighbours = up + down + ag::roll(board, 1, 1) + ag::roll(board, -1, 1) + ag::roll(up, 1, 1) +
                        ag::roll(up, -1, 1) + ag::roll(down, 1, 1) + ag::roll(down, -1, 1);
    board = ag::cast((neighbours == 3) | ((board == 1) & (neighbours == 2)), ag::DType::UInt8);
    g += 1;
  }
  return board;
}

std::vector<uint8_t> life_by_hand(std::vector<uint8_t> b, int64_t n, int generations) {
  std::vector<uint8_t> next(b.size());
  // Branch-free on 8-bit counts, so that the compiler vectorizes the interior 32 cells at a time.
  auto rule = [](uint8_t alive, uint8_t count) { return static_cast<uint8_t>((count == 3) | (alive & (count == 2))); };
  for (int s = 0; s < generations; ++s) {
    for (int64_t r = 0; r < n; ++r) {
      const uint8_t* c = &b[static_cast<size_t>(r * n)];
      const uint8_t* up = &b[static_cast<size_t>(((r + n - 1) % n) * n)];
      const uint8_t* down = &b[static_cast<size_t>(((r + 1) % n) * n)];
      uint8_t* o = &next[static_cast<size_t>(r * n)];
      auto count = [&](int64_t l, int64_t k, int64_t h) {
        return static_cast<uint8_t>(up[l] + up[k] + up[h] + c[l] + c[h] + down[l] + down[k] + down[h]);
      };
      o[0] = rule(c[0], count(n - 1, 0, 1));
      for (int64_t k = 1; k < n - 1; ++k) o[k] = rule(c[k], count(k - 1, k, k + 1));
      o[n - 1] = rule(c[n - 1], count(n - 2, n - 1, 0));
    }
    std::swap(b, next);
  }
  return b;
}

int main(int argc, char** argv) {
  const int generations = argc > 1 ? std::atoi(argv[1]) : 100;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 512;
  std::vector<uint8_t> b0(static_cast<size_t>(n * n));
  for (int64_t k = 0; k < n * n; ++k) b0[static_cast<size_t>(k)] = static_cast<uint8_t>((k * 7919 + k / n * 104729) % 7 < 3);
  const Tensor tb = ag::constant(b0, {n, n});
  const Tensor tg = ag::constant(int32_t{generations});

  auto f = ag::function(life);
  const auto t0 = std::chrono::steady_clock::now();
  const Tensor ours = f(tb, tg);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The first call runs at the default thread count (the compile's second module uses the
  // pool's second thread); the run-time comparison below at one thread unless said.
  ag::set_num_threads(1);
  const std::vector<uint8_t> theirs = life_by_hand(b0, n, generations);
  const std::vector<uint8_t> got = ours.to_vector<uint8_t>();
  int64_t differ = 0, alive = 0;
  for (size_t k = 0; k < got.size(); ++k) differ += got[k] != theirs[k], alive += theirs[k];
  if (differ != 0) std::printf("warning: %lld cells differ from the loop's\n", static_cast<long long>(differ));

  auto run_agc = [&] { agbench::keep(f(tb, tg)); };
  const std::vector<double> t = agbench::time_interleaved(
      ag::set_num_threads, {{[&] { agbench::keep(life_by_hand(b0, n, generations)); }}, {run_agc, 1}, {run_agc, 2}});
  const double by_hand = t[0];
  std::vector<agbench::Row> rows;
  for (int threads : {1, 2}) {
    const double agc = t[static_cast<size_t>(threads)];
    rows.push_back({fmt::format("life (one call), {} thread{}", threads, threads > 1 ? "s" : ""), agbench::ms(agc),
                    agbench::ms(by_hand) + " plain loop", fmt::format("{:.2f}x", agc / by_hand),
                    threads == 1 ? fmt::format("{:.1f} us per generation; {} cells differ, {} alive", agc / generations * 1e6, differ, alive)
                                 : "the loop on 1 thread"});
  }
  rows.push_back({"first call (trace + compile, default threads)", agbench::ms(first), "", "", ""});
  agbench::print_table(fmt::format("Game of Life on a {}x{} torus (eight rolls of a uint8 board), {} generations", n, n, generations), rows);
  return 0;
}
