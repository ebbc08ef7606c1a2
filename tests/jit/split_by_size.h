// Compiled loops split by their size for a scope (AG_LOOP_SPLITS=size, the default), whatever the
// environment says: for tests of the size rules and of what a split computes
// (ag/detail/loop_splits.h).
#pragma once

#include "ag/detail/loop_splits.h"

namespace agtest {

class SplitBySize {
 public:
  // The pool reads AG_LOOP_SPLITS when it first starts: start it first, so the scope's mode holds.
  SplitBySize() {
    (void)ag::detail::parallel_threads();
    saved_ = ag::detail::set_loop_splits_mode(ag::detail::LoopSplitsMode::BySize);
  }
  ~SplitBySize() { ag::detail::set_loop_splits_mode(saved_); }
  SplitBySize(const SplitBySize&) = delete;
  SplitBySize& operator=(const SplitBySize&) = delete;

 private:
  ag::detail::LoopSplitsMode saved_ = ag::detail::LoopSplitsMode::BySize;
};

}  // namespace agtest
