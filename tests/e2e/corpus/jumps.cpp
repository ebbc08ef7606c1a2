// Corpus: break, continue and return inside staged loops and branches.
#include <ag/ag.h>

#include "e2e.h"

using ag::Tensor;

AG_FUNCTION Tensor first_multiple_over(Tensor n, Tensor limit) {
  Tensor r = 0;
  for (auto i : ag::range(1, 100)) {
    if (i * n > limit) {
      r = i;
      break;
    }
  }
  return r;
}
AG_E2E(first_multiple_over, std::tuple{7, 50}, std::tuple{3, 1000});

AG_FUNCTION Tensor doubling_until_multiple_of_three(Tensor x) {
  while (x < 1000) {
    x = x * 2 + 1;
    if (x % 3 == 0) break;
  }
  return x;
}
AG_E2E(doubling_until_multiple_of_three, std::tuple{1}, std::tuple{2}, std::tuple{5000});

AG_FUNCTION Tensor sum_of_odds(Tensor n) {
  Tensor s = 0;
  for (auto i : ag::range(n)) {
    if (i % 2 == 0) continue;
    s += i;
  }
  return s;
}
AG_E2E(sum_of_odds, std::tuple{0}, std::tuple{10});

// continue in a C-style for still runs the increment.
AG_FUNCTION Tensor skip_multiples_of_three(Tensor n) {
  Tensor s = 0;
  for (Tensor i = 0; i < n; i += 1) {
    if (i % 3 == 0) continue;
    s += i;
  }
  return s;
}
AG_E2E(skip_multiples_of_three, std::tuple{10}, std::tuple{1});

AG_FUNCTION Tensor continue_in_while(Tensor n) {
  Tensor i = 0, s = 0;
  while (i < n) {
    i += 1;
    if (i % 2 == 1) continue;
    s += i;
  }
  return s;
}
AG_E2E(continue_in_while, std::tuple{9}, std::tuple{0});

AG_FUNCTION Tensor early_return(Tensor x) {
  if (x > 0) return x * 2;
  return -x;
}
AG_E2E(early_return, std::tuple{5}, std::tuple{-5});

AG_FUNCTION Tensor find_index(Tensor v, Tensor target) {
  for (auto i : ag::range(ag::shape_of(v)[0])) {
    if (v[i] == target) return ag::cast(i, ag::int32);
  }
  return Tensor(-1);
}
AG_E2E(find_index, std::tuple{ag::constant({4, 8, 15, 16}), 15}, std::tuple{ag::constant({4, 8, 15, 16}), 3});

AG_FUNCTION Tensor return_from_nested_loops(Tensor n, Tensor k) {
  for (auto i : ag::range(n)) {
    for (auto j : ag::range(n)) {
      if (i * j > k) return i * 10 + j;
    }
  }
  return Tensor(-1);
}
AG_E2E(return_from_nested_loops, std::tuple{5, 6}, std::tuple{3, 100});

AG_FUNCTION Tensor break_inside_if_inside_while(Tensor n, Tensor k) {
  Tensor i = 0;
  while (i < n) {
    if (i > k) {
      if (i % 2 == 0) break;
    }
    i += 1;
  }
  return i;
}
AG_E2E(break_inside_if_inside_while, std::tuple{20, 5}, std::tuple{4, 10});

AG_FUNCTION std::tuple<Tensor, Tensor> ordered(Tensor a, Tensor b) {
  if (a > b) return {b, a};
  return std::tuple{a, b};
}
AG_E2E(ordered, std::tuple{3, 9}, std::tuple{9, 3});

AG_FUNCTION Tensor do_while_with_break(Tensor x) {
  Tensor steps = 0;
  do {
    steps += 1;
    if (x % 5 == 0) break;
    x = x + 3;
  } while (steps < 10);
  return steps * 100 + x;
}
AG_E2E(do_while_with_break, std::tuple{5}, std::tuple{1}, std::tuple{2});

AG_FUNCTION Tensor return_inside_do_while(Tensor x) {
  do {
    x = x - 4;
    if (x < 3) return x * 10;
  } while (x > 0);
  return x;
}
AG_E2E(return_inside_do_while, std::tuple{20}, std::tuple{2});

AG_FUNCTION Tensor all_jumps(Tensor n) {
  Tensor s = 0;
  Tensor i = 0;
  while (i < n) {
    i += 1;
    if (i % 4 == 0) continue;
    if (s > 40) break;
    if (i == 13) return s * 1000;
    s += i;
  }
  return s;
}
AG_E2E(all_jumps, std::tuple{5}, std::tuple{12}, std::tuple{30});

// continue in a do-while goes to the condition.
AG_FUNCTION Tensor continue_in_do_while(Tensor x) {
  Tensor s = 0;
  do {
    x -= 1;
    if (x % 2 == 0) continue;
    s += x;
  } while (x > 0);
  return s;
}
AG_E2E(continue_in_do_while, std::tuple{7}, std::tuple{0});

AG_FUNCTION Tensor for_with_break_and_continue(Tensor n) {
  Tensor s = 0;
  Tensor last = -1;
  for (Tensor i = 0; i < n; i += 1) {
    last = i;
    if (i % 2 == 0) continue;
    if (i > 7) break;
    s += i;
  }
  return s * 100 + last;
}
AG_E2E(for_with_break_and_continue, std::tuple{4}, std::tuple{20});

// A goto whose label is in the same staged body is plain C++ that runs while tracing (a
// backward one repeats code, a forward one skips it), as it runs on concrete tensors.
AG_FUNCTION Tensor goto_inside_staged_body(Tensor x, bool skip) {
  while (x < 100) {
    int repeats = 0;
  again:
    x = x + 1;
    if (++repeats < 3) goto again;
    if (skip) goto doubled;
    x = x + 10;
  doubled:
    x = x * 2;
  }
  return x;
}
AG_E2E(goto_inside_staged_body, std::tuple{1, false}, std::tuple{1, true}, std::tuple{150, true});
