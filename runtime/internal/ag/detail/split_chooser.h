// Whether a piece of work runs split over the pool's threads or whole on the calling thread:
// measured in the process that runs it, per key (a product's shape: gemm_halves.h; a compiled
// loop: loop_splits.h).
//
// A split changes no bit of the result, only time, and time depends on where the threads run:
// on a 2-vCPU VM whose vCPUs moved between phases, a cache line took 80-90 ns from one vCPU to
// the other in one phase and 450-500 ns in another, and the same split ran 0.64x the whole's
// time in the first, 1.4x in the second. No threshold on the size is right in both, so for each
// key the first calls try split and whole (kTrialsPerSide each, split first), the faster by
// the best of each is taken (the way that is not the key's default only when it takes under
// kRequiredGain of the other's time: what a split leaves in another core's cache costs or
// saves the next reader time the timing does not see), and the trial runs again every
// kRetrialCalls calls in case the machine changed, and at once when a split, once taken, falls
// behind: every kWatchEvery-th call of it is timed, and when the best of kWatchSamples such
// calls is slower than the whole's best, both are tried again.
#pragma once

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "ag/detail/log.h"

namespace ag::detail {

// Key: equality-comparable; describe(key) starts its AG_LOG=kernels lines.
template <class Key>
class SplitChooser {
 public:
  static constexpr int kTrialsPerSide = 6;
  static constexpr int64_t kRetrialCalls = 2048;
  static constexpr double kRequiredGain = 0.9;
  static constexpr int64_t kWatchEvery = 32;
  static constexpr int kWatchSamples = 4;

  using Describe = std::string (*)(const Key&);
  // The order of a trial's calls: alternating (a product: each call's data comes fresh), or all
  // of the split's calls, then all of the whole's (a loop in a staged loop: a split keeps each
  // half of the data in its core's cache from one iteration to the next, which alternating calls
  // undo; the heat stencil's split step took 10.2 us in an alternating trial, 8.7 in a row).
  enum class Order { Alternate, InARow };
  // Which way a trial must beat by kRequiredGain: the split (a product: the whole is the default)
  // or the whole (a compiled loop, split by its size before the trials: its split also keeps the
  // next split loop's data where that loop's threads read it, which its own time does not show;
  // k-means' largest loop, 225 us split and 220 us whole in the trial, ran its solve 0.48x the
  // plain loop's time split and 0.68x whole).
  enum class Default { Whole, Split };
  struct Options {
    int slots = 32;  // the keys kept at once (the least recently used one's slot is reused)
    Order order = Order::Alternate;
    Default prefer = Default::Whole;
  };
  explicit SplitChooser(Describe describe, Options options = {})
      : describe_(describe), slots_(static_cast<size_t>(options.slots)), options_(options) {}

  struct Choice {
    bool split = false;
    bool timed = false;  // a trial call, or a watched call of a split taken: report its time with record()
  };
  Choice choose(const Key& key) {
    std::lock_guard lock(mu_);
    Slot& s = slot_of(key);
    s.last_use = ++clock_;
    if (s.decided) {
      if (++s.calls_since < kRetrialCalls) return {s.split, s.split && s.calls_since % kWatchEvery == 0};
      // The machine may have changed (another phase of a VM, other load): try both again.
      s.decided = false;
      s.whole_runs = s.split_runs = 0;
    }
    return {options_.order == Order::Alternate ? s.split_runs <= s.whole_runs : s.split_runs < kTrialsPerSide, true};
  }
  // Pure in time: callers pass the elapsed nanoseconds, so tests drive it with their own.
  void record(const Key& key, bool split, int64_t elapsed_ns) {
    std::string line;
    {
      std::lock_guard lock(mu_);
      Slot& s = slot_of(key);
      if (s.decided) {
        // A watched call of the split taken (or another thread's trial call that finished after
        // the decision: a sample alike).
        if (!split || !s.split) return;
        s.watch_best = s.watch_runs == 0 ? elapsed_ns : std::min(s.watch_best, elapsed_ns);
        if (++s.watch_runs < kWatchSamples) return;
        s.watch_runs = 0;
        if (s.watch_best <= s.best_whole) return;
        // Behind the whole now: both are tried again from the next call.
        if (log_enabled(LogTopic::Kernels))
          line = fmt::format("{}: split taken, now {:.1f} us (best of {} watched calls) against the whole's {:.1f} us -> trying both again",
                             describe_(s.key), us(s.watch_best), kWatchSamples, us(s.best_whole));
        s.decided = false;
        s.whole_runs = s.split_runs = 0;
        ++decisions_.fell_behind;
      } else {
        record_trial(s, split, elapsed_ns, line);
      }
    }
    if (!line.empty()) log_line(line);
  }

  // Decisions taken since the chooser was made (tests).
  struct Decisions {
    int64_t split = 0, whole = 0;
    int64_t fell_behind = 0;  // split taken, then watched slower than the whole: tried again
  };
  Decisions decisions() const {
    std::lock_guard lock(mu_);
    return decisions_;
  }

 private:
  struct Slot {
    Key key{};
    bool used = false;
    int whole_runs = 0, split_runs = 0;
    int64_t best_whole = 0, best_split = 0;
    bool decided = false, split = false;
    bool ever_decided = false;  // a decision was logged (AG_LOG=kernels)
    int64_t calls_since = 0;
    int watch_runs = 0;  // watched calls of a split taken since the decision (or the last judgement)
    int64_t watch_best = 0;
    uint64_t last_use = 0;
  };
  static double us(int64_t ns) { return static_cast<double>(ns) / 1e3; }

  Slot& slot_of(const Key& key) {
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

  // mu_ held. `...: split 15.1 us, whole 22.9 us (best of 6 each) -> split`, at a key's first
  // decision and when a trial changes it.
  void record_trial(Slot& s, bool split, int64_t elapsed_ns, std::string& line) {
    int& runs = split ? s.split_runs : s.whole_runs;
    int64_t& best = split ? s.best_split : s.best_whole;
    best = runs == 0 ? elapsed_ns : std::min(best, elapsed_ns);
    ++runs;
    if (s.split_runs < kTrialsPerSide || s.whole_runs < kTrialsPerSide) return;
    const bool first = !s.ever_decided, before = s.split;
    s.decided = s.ever_decided = true;
    s.calls_since = 0;
    s.watch_runs = 0;
    const double split_ns = static_cast<double>(s.best_split), whole_ns = static_cast<double>(s.best_whole);
    s.split = options_.prefer == Default::Whole ? split_ns < kRequiredGain * whole_ns : !(whole_ns < kRequiredGain * split_ns);
    ++(s.split ? decisions_.split : decisions_.whole);
    if ((first || s.split != before) && log_enabled(LogTopic::Kernels))
      line = fmt::format("{}: split {:.1f} us, whole {:.1f} us (best of {} each) -> {}{}", describe_(s.key), us(s.best_split),
                         us(s.best_whole), kTrialsPerSide, s.split ? "split" : "whole", first ? "" : " (changed by a later trial)");
  }

  Describe describe_;
  mutable std::mutex mu_;
  std::vector<Slot> slots_;
  Options options_;
  uint64_t clock_ = 0;
  Decisions decisions_;
};

}  // namespace ag::detail
