// The staged loop the check_numerics tests plant a NaN in (tests/runtime and tests/jit run it
// eagerly, interpreted and compiled): acc = sqrt(acc - 1), n times. x = [10, 5, 2] stays real
// for two steps; the third takes the root of -1 in element [2], at line nan_in_a_loop_line().
#pragma once

#include <ag/ag.h>

namespace agtest {

inline int& nan_in_a_loop_line() {
  static int line = 0;
  return line;
}

inline ag::Tensor roots(ag::Tensor x, ag::Tensor n) {
  ag::Tensor i = ag::Tensor(0);
  ag::Tensor acc = x;
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   nan_in_a_loop_line() = __LINE__ + 1;
                   acc = ag::sqrt(acc - 1.f);
                   i += 1;
                 },
                 ag::state(i, acc), {"i", "acc"}, AG_SOURCE_LOC("nan_in_a_loop.h", 1));
  return acc * 2.f;
}

}  // namespace agtest
