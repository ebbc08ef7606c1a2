// The measured choice between a mid-size product's halves and the whole product
// (ag/detail/gemm_halves.h).
#include "ag/detail/gemm_halves.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "ag/detail/log.h"
#include "ag/detail/parallel.h"
#include "ag/error.h"

namespace ag::detail {
namespace {

std::atomic<GemmHalvesMode> g_mode{GemmHalvesMode::Measure};

}  // namespace

GemmHalvesMode gemm_halves_mode() { return g_mode.load(std::memory_order_relaxed); }

void read_gemm_halves_mode_from_env() {
  const char* e = std::getenv("AG_GEMM_HALVES");
  if (!e || !*e || std::strcmp(e, "measure") == 0) return g_mode.store(GemmHalvesMode::Measure, std::memory_order_relaxed);
  if (std::strcmp(e, "1") == 0) return g_mode.store(GemmHalvesMode::Always, std::memory_order_relaxed);
  if (std::strcmp(e, "0") == 0) return g_mode.store(GemmHalvesMode::Never, std::memory_order_relaxed);
  throw ValueError(fmt::format("AG_GEMM_HALVES={}: expected measure, 1 (always) or 0 (never)", e));
}

GemmHalvesMode set_gemm_halves_mode(GemmHalvesMode mode) { return g_mode.exchange(mode, std::memory_order_relaxed); }

namespace {

// The start of each AG_LOG=kernels line about a shape: `agc: MatMul 32x128x512 float32, B packed,
// 2 threads`.
std::string shape_text(const GemmShapeKey& key) {
  return fmt::format("agc: MatMul {}x{}x{} {}{}{}{}, {} threads", key.m, key.k, key.n, key.dtype, key.transposes & 1 ? ", A transposed" : "",
                     key.transposes & 2 ? ", B transposed" : "", key.packed_b ? ", B packed" : "", parallel_threads());
}

}  // namespace

// `...: halves 15.1 us, whole 22.9 us (best of 6 each) -> halves`, at a shape's first decision
// and when a trial changes it.
std::string GemmHalvesChooser::decision_line(const Slot& s, bool first) {
  return fmt::format("{}: halves {:.1f} us, whole {:.1f} us (best of {} each) -> {}{}", shape_text(s.key),
                     static_cast<double>(s.best_halves) / 1e3, static_cast<double>(s.best_whole) / 1e3, kTrialsPerSide,
                     s.halves ? "halves" : "whole", first ? "" : " (changed by a later trial)");
}

// `...: halves taken, now 25.1 us (best of 4 watched calls) against the whole's 20.3 us -> trying
// both again`.
std::string GemmHalvesChooser::watch_line(const Slot& s) {
  return fmt::format("{}: halves taken, now {:.1f} us (best of {} watched calls) against the whole's {:.1f} us -> trying both again",
                     shape_text(s.key), static_cast<double>(s.watch_best) / 1e3, kWatchSamples, static_cast<double>(s.best_whole) / 1e3);
}

GemmHalvesChooser::Slot& GemmHalvesChooser::slot_of(const GemmShapeKey& key) {
  Slot* oldest = &slots_[0];
  for (Slot& s : slots_) {
    if (s.used && s.key == key) return s;
    if (!s.used || (oldest->used && s.last_use < oldest->last_use)) oldest = &s;
  }
  *oldest = Slot{};
  oldest->key = key;
  oldest->used = true;
  return *oldest;
}

GemmHalvesChooser::Choice GemmHalvesChooser::choose(const GemmShapeKey& key) {
  std::lock_guard lock(mu_);
  Slot& s = slot_of(key);
  s.last_use = ++clock_;
  if (s.decided) {
    if (++s.calls_since < kRetrialCalls) return {s.halves, s.halves && s.calls_since % kWatchEvery == 0};
    // The machine may have changed (another phase of a VM, other load): try both again.
    s.decided = false;
    s.whole_runs = s.halves_runs = 0;
  }
  // Alternate, halves first: each side's best of kTrialsPerSide.
  return {s.halves_runs <= s.whole_runs, true};
}

void GemmHalvesChooser::record(const GemmShapeKey& key, bool halves, int64_t elapsed_ns) {
  std::string line;
  {
    std::lock_guard lock(mu_);
    Slot& s = slot_of(key);
    if (s.decided) {
      // A watched call of the halves taken (or another thread's trial call that finished after
      // the decision: a sample alike).
      if (!halves || !s.halves) return;
      s.watch_best = s.watch_runs == 0 ? elapsed_ns : std::min(s.watch_best, elapsed_ns);
      if (++s.watch_runs < kWatchSamples) return;
      s.watch_runs = 0;
      if (s.watch_best <= s.best_whole) return;
      // Behind the whole product now: both are tried again from the next call.
      if (log_enabled(LogTopic::Kernels)) line = watch_line(s);
      s.decided = false;
      s.whole_runs = s.halves_runs = 0;
      ++decisions_.fell_behind;
    } else {
      record_trial(s, halves, elapsed_ns, line);
    }
  }
  if (!line.empty()) log_line(line);
}

void GemmHalvesChooser::record_trial(Slot& s, bool halves, int64_t elapsed_ns, std::string& line) {
  int& runs = halves ? s.halves_runs : s.whole_runs;
  int64_t& best = halves ? s.best_halves : s.best_whole;
  best = runs == 0 ? elapsed_ns : std::min(best, elapsed_ns);
  ++runs;
  if (s.halves_runs < kTrialsPerSide || s.whole_runs < kTrialsPerSide) return;
  const bool first = !s.ever_decided, before = s.halves;
  s.decided = s.ever_decided = true;
  s.calls_since = 0;
  s.watch_runs = 0;
  s.halves = static_cast<double>(s.best_halves) < kRequiredGain * static_cast<double>(s.best_whole);
  ++(s.halves ? decisions_.halves : decisions_.whole);
  if ((first || s.halves != before) && log_enabled(LogTopic::Kernels)) line = decision_line(s, first);
}

GemmHalvesChooser::Decisions GemmHalvesChooser::decisions() const {
  std::lock_guard lock(mu_);
  return decisions_;
}

GemmHalvesChooser& gemm_halves_chooser() {
  static GemmHalvesChooser chooser;
  return chooser;
}

GemmHalvesTrial::GemmHalvesTrial(const GemmShapeKey& key) : key_(key) {
  switch (gemm_halves_mode()) {
    case GemmHalvesMode::Always: choice_ = {true, false}; return;
    case GemmHalvesMode::Never: choice_ = {false, false}; return;
    case GemmHalvesMode::Measure: break;
  }
  choice_ = gemm_halves_chooser().choose(key);
  if (choice_.timed) start_ = std::chrono::steady_clock::now();
}

GemmHalvesTrial::~GemmHalvesTrial() {
  if (!choice_.timed) return;
  const auto elapsed = std::chrono::steady_clock::now() - start_;
  gemm_halves_chooser().record(key_, choice_.halves, std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
}

}  // namespace ag::detail
