// Corpus: while, do-while, C-style for and range-for on tensors.
#include <ag/ag.h>

#include "e2e.h"

using ag::Tensor;

AG_FUNCTION Tensor collatz(Tensor n) {
  Tensor steps = 0;
  while (n > 1) {
    if (n % 2 == 0) n = n / 2;
    else n = 3 * n + 1;
    steps += 1;
  }
  return steps;
}
AG_E2E(collatz, std::tuple{1}, std::tuple{7}, std::tuple{27});

AG_FUNCTION Tensor sum_range(Tensor n) {
  Tensor s = 0;
  for (auto i : ag::range(n)) s += i;
  return s;
}
AG_E2E(sum_range, std::tuple{0}, std::tuple{1}, std::tuple{10});

AG_FUNCTION Tensor factorial(Tensor n) {
  Tensor result = 1;
  for (Tensor i = 1; i <= n; i += 1) result *= i;
  return result;
}
AG_E2E(factorial, std::tuple{0}, std::tuple{5}, std::tuple{10});

AG_FUNCTION Tensor do_while_steps(Tensor x) {
  Tensor count = 0;
  do {
    x = x - 3;
    count += 1;
  } while (x > 0);
  return count;
}
AG_E2E(do_while_steps, std::tuple{-5}, std::tuple{1}, std::tuple{10});

AG_FUNCTION Tensor row_sums(Tensor m) {
  Tensor total = 0.0f;
  for (auto row : m) total = total + ag::reduce_max(row);
  return total;
}
AG_E2E(row_sums, std::tuple{ag::constant({{1.0f, 5.0f}, {7.0f, 2.0f}, {0.5f, 0.25f}})});

AG_FUNCTION Tensor fibonacci(Tensor n) {
  Tensor a = 0, b = 1;
  Tensor i = 0;
  while (i < n) {
    Tensor t = a + b;
    a = b;
    b = t;
    i += 1;
  }
  return a;
}
AG_E2E(fibonacci, std::tuple{0}, std::tuple{1}, std::tuple{20});

AG_FUNCTION Tensor gcd(Tensor a, Tensor b) {
  while (b != 0) {
    Tensor t = b;
    b = a % b;
    a = t;
  }
  return a;
}
AG_E2E(gcd, std::tuple{48, 18}, std::tuple{17, 5}, std::tuple{7, 0});

// A plain C++ loop unrolls while tracing; the tensor if inside it is staged each time.
AG_FUNCTION Tensor unrolled_plain_loop(Tensor x) {
  for (int i = 0; i < 4; ++i) {
    if (x > 10) x = x - 10;
    else x = x + 7;
  }
  return x;
}
AG_E2E(unrolled_plain_loop, std::tuple{0}, std::tuple{25});

AG_FUNCTION Tensor triangle(Tensor n) {
  Tensor total = 0;
  for (auto i : ag::range(n))
    for (auto j : ag::range(i)) total += j;
  return total;
}
AG_E2E(triangle, std::tuple{0}, std::tuple{4}, std::tuple{7});

AG_FUNCTION Tensor range_with_start_and_step(Tensor n) {
  Tensor s = 0;
  for (auto i : ag::range(Tensor(2), n, Tensor(3))) s = s * 2 + i;
  return s;
}
AG_E2E(range_with_start_and_step, std::tuple{3}, std::tuple{14});

AG_FUNCTION Tensor accumulate_tensor_array(Tensor n) {
  ag::TensorArray ta(ag::int32);
  for (auto i : ag::range(n)) ta = ta.write(i, i * i);
  return ag::reduce_sum(ta.stack());
}
AG_E2E(accumulate_tensor_array, std::tuple{1}, std::tuple{5});

// The spellings of ag::set_loop_options the docs show: a shape invariant by the variable's
// address (which a staged loop carries), an iteration limit, both.
AG_FUNCTION Tensor grow_with_a_shape_invariant(Tensor x, Tensor n) {
  Tensor i = 0;
  while (i < n) {
    ag::set_loop_options({.shape_invariants = {{&x, {-1}}}});
    x = ag::concat({x, x * 0.5f}, 0);
    i += 1;
  }
  return ag::reduce_sum(x);
}
AG_E2E(grow_with_a_shape_invariant, std::tuple{ag::constant({1.0f, 2.0f}), 0}, std::tuple{ag::constant({1.0f, 2.0f}), 3});

AG_FUNCTION Tensor steps_with_a_limit(Tensor x) {
  Tensor steps = 0;
  while (x > 0) {
    ag::set_loop_options({.shape_invariants = {{&x, {}}}, .maximum_iterations = 100});
    x = x - 3;
    steps += 1;
  }
  for (auto i : ag::range(x + 10)) {
    ag::set_loop_options({.maximum_iterations = 50});
    steps += i;
  }
  return steps;
}
AG_E2E(steps_with_a_limit, std::tuple{-2}, std::tuple{7}, std::tuple{20});
