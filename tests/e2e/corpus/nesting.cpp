// Corpus: constructs nested in each other.
#include <ag/ag.h>

#include "e2e.h"

using ag::Tensor;

AG_FUNCTION Tensor if_in_while_in_for(Tensor n) {
  Tensor s = 0;
  for (auto i : ag::range(n)) {
    Tensor j = 0;
    while (j < i) {
      if (j % 2 == 0) s += j;
      else s -= 1;
      j += 1;
    }
  }
  return s;
}
AG_E2E(if_in_while_in_for, std::tuple{0}, std::tuple{6});

AG_FUNCTION Tensor loop_in_if(Tensor x) {
  Tensor s = 0;
  if (x > 0) {
    for (auto i : ag::range(x)) s += i * i;
  } else {
    while (x < 0) {
      x += 2;
      s -= 1;
    }
  }
  return s;
}
AG_E2E(loop_in_if, std::tuple{4}, std::tuple{-7});

AG_FUNCTION Tensor four_levels(Tensor n) {
  Tensor s = 0;
  for (auto i : ag::range(n)) {
    if (i % 2 == 0) {
      Tensor k = i;
      while (k > 0) {
        if (k % 3 == 0) s += k;
        else s += 1;
        k -= 1;
      }
    }
  }
  return s;
}
AG_E2E(four_levels, std::tuple{7});

AG_FUNCTION Tensor continue_and_break_nested(Tensor n) {
  Tensor s = 0;
  for (auto i : ag::range(n)) {
    if (i % 2 == 1) continue;
    for (auto j : ag::range(n)) {
      if (j > i) break;
      s += j;
    }
  }
  return s;
}
AG_E2E(continue_and_break_nested, std::tuple{6});

AG_FUNCTION Tensor return_in_if_in_loop_in_if(Tensor x, Tensor n) {
  if (x > 0) {
    for (auto i : ag::range(n)) {
      if (i * x > 20) return i;
    }
  }
  return Tensor(-1);
}
AG_E2E(return_in_if_in_loop_in_if, std::tuple{5, 10}, std::tuple{-5, 10}, std::tuple{1, 3});

AG_FUNCTION Tensor else_if_chain_in_loop(Tensor n) {
  Tensor a = 0, b = 0, c = 0;
  for (auto i : ag::range(n)) {
    if (i % 3 == 0) a += 1;
    else if (i % 3 == 1) b += 1;
    else c += 1;
  }
  return a * 100 + b * 10 + c;
}
AG_E2E(else_if_chain_in_loop, std::tuple{10});
