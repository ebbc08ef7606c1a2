// How compiled loops choose to split (ag/detail/loop_splits.h, AG_LOOP_SPLITS) for a scope,
// whatever the environment says. Tests of the size rules and of what a split computes pin
// LoopSplitsMode::BySize (the default); tests of the trial pin Measure.
#pragma once

#include "ag/detail/loop_splits.h"

namespace agtest {

class ScopedLoopSplits {
 public:
  // The pool reads AG_LOOP_SPLITS when it first starts: start it first, so the scope's mode holds.
  explicit ScopedLoopSplits(ag::detail::LoopSplitsMode mode) {
    (void)ag::detail::parallel_threads();
    saved_ = ag::detail::set_loop_splits_mode(mode);
  }
  ~ScopedLoopSplits() { ag::detail::set_loop_splits_mode(saved_); }
  ScopedLoopSplits(const ScopedLoopSplits&) = delete;
  ScopedLoopSplits& operator=(const ScopedLoopSplits&) = delete;

 private:
  ag::detail::LoopSplitsMode saved_ = ag::detail::LoopSplitsMode::BySize;
};

}  // namespace agtest
