// Corpus: if / else if / else on tensors, state of locals, members and elements.
#include <ag/ag.h>

#include "e2e.h"

using ag::Tensor;

AG_FUNCTION Tensor abs_value(Tensor x) {
  if (x < 0) x = -x;
  return x;
}
AG_E2E(abs_value, std::tuple{-3}, std::tuple{4}, std::tuple{2.5f});

AG_FUNCTION Tensor sign(Tensor x) {
  Tensor s = 0;
  if (x > 0) {
    s = 1;
  } else if (x < 0) {
    s = -1;
  } else {
    s = 0;
  }
  return s;
}
AG_E2E(sign, std::tuple{-7}, std::tuple{0}, std::tuple{9});

AG_FUNCTION Tensor clip(Tensor x, Tensor lo, Tensor hi) {
  if (x < lo) {
    x = lo;
  } else {
    if (x > hi) x = hi;
  }
  return x;
}
AG_E2E(clip, std::tuple{-5, 0, 10}, std::tuple{5, 0, 10}, std::tuple{50, 0, 10});

// y has no value before the if: both branches assign it.
AG_FUNCTION Tensor assigned_in_both(Tensor x) {
  Tensor y;
  if (x > 0) y = x * 2;
  else y = x * 3;
  return y;
}
AG_E2E(assigned_in_both, std::tuple{4}, std::tuple{-4});

AG_FUNCTION Tensor if_with_init(Tensor x) {
  if (Tensor d = x - 1; d > 0) x = d * 10;
  return x;
}
AG_E2E(if_with_init, std::tuple{5}, std::tuple{1});

struct Accumulator {
  Tensor sum;
  Tensor count;
};

// Members of a local aggregate are state (s.sum, s.count).
AG_FUNCTION Tensor aggregate_members(Tensor x) {
  Accumulator acc{Tensor(0), Tensor(0)};
  if (x > 0) {
    acc.sum = acc.sum + x;
    acc.count = acc.count + 1;
  }
  return acc.sum * 100 + acc.count;
}
AG_E2E(aggregate_members, std::tuple{3}, std::tuple{-3});

// Elements of a local array are state (arr[0]).
AG_FUNCTION Tensor array_elements(Tensor x) {
  Tensor arr[2] = {x, x + 1};
  if (x > 1) arr[0] = arr[0] * 2;
  else arr[1] = arr[1] * 3;
  return arr[0] * 10 + arr[1];
}
AG_E2E(array_elements, std::tuple{2}, std::tuple{0});

// A plain C++ condition stays C++; the tensor condition inside is converted.
AG_FUNCTION Tensor plain_and_tensor_conditions(Tensor x, bool negate) {
  if (negate) x = -x;
  if (x > 0) x = x + 100;
  return x;
}
AG_E2E(plain_and_tensor_conditions, std::tuple{5, true}, std::tuple{5, false});

AG_FUNCTION Tensor vector_condition(Tensor v) {
  Tensor out = v;
  if (ag::reduce_sum(v) > 10) out = v * 2;
  else out = v - 1;
  return out;
}
AG_E2E(vector_condition, std::tuple{ag::constant({1.0f, 2.0f, 3.0f})}, std::tuple{ag::constant({5.0f, 6.0f, 7.0f})});
