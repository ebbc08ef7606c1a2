// Corpus: lazy &&, ||, ! and ?: on tensors.
#include <ag/ag.h>

#include "e2e.h"

using ag::Tensor;

AG_FUNCTION Tensor both_positive(Tensor x, Tensor y) {
  Tensor r = 0;
  if (x > 0 && y > 0) r = x + y;
  return r;
}
AG_E2E(both_positive, std::tuple{1, 2}, std::tuple{1, -2}, std::tuple{-1, 2});

AG_FUNCTION Tensor either_positive(Tensor x, Tensor y) {
  Tensor r = 0;
  if (x > 0 || y > 0) r = 1;
  else r = -1;
  return r;
}
AG_E2E(either_positive, std::tuple{-1, 2}, std::tuple{-1, -2});

AG_FUNCTION Tensor negated_condition(Tensor x) {
  Tensor r = x;
  if (!(x > 3)) r = x * 100;
  return r;
}
AG_E2E(negated_condition, std::tuple{1}, std::tuple{5});

// The right operand has a side effect (a staged Variable update): it must run only when the
// left operand does not decide the result, eagerly and in the graph alike.
ag::Variable right_operand_calls(Tensor(0));

AG_FUNCTION Tensor side_effecting_right_operand(Tensor x, Tensor y) {
  right_operand_calls.assign(Tensor(0));
  auto counted = [&](Tensor v) {
    right_operand_calls.assign_add(Tensor(1));
    return v > 0;
  };
  Tensor r = 0;
  if (x > 0 && counted(y)) r = 1;
  if (x > 0 || counted(y)) r = r + 10;
  return r + 100 * right_operand_calls.read_value();
}
AG_E2E(side_effecting_right_operand, std::tuple{1, 1}, std::tuple{-1, 1}, std::tuple{1, -1}, std::tuple{-1, -1});

AG_FUNCTION Tensor conditional_expression(Tensor x) {
  Tensor y = x > 0 ? x * 2 : -x;
  return y;
}
AG_E2E(conditional_expression, std::tuple{3}, std::tuple{-3});

AG_FUNCTION Tensor nested_conditional_expression(Tensor x) {
  return x > 10 ? Tensor(2) : x > 0 ? Tensor(1) : Tensor(0);
}
AG_E2E(nested_conditional_expression, std::tuple{20}, std::tuple{5}, std::tuple{-5});

AG_FUNCTION Tensor logical_loop_condition(Tensor n) {
  Tensor i = 0, s = 0;
  while (i < n && s < 20) {
    s += i;
    i += 1;
  }
  return s * 100 + i;
}
AG_E2E(logical_loop_condition, std::tuple{3}, std::tuple{100});

AG_FUNCTION Tensor mixed_bool_and_tensor(Tensor x, bool enabled) {
  Tensor r = x;
  if (enabled && x > 0) r = x * 3;
  return r;
}
AG_E2E(mixed_bool_and_tensor, std::tuple{2, true}, std::tuple{2, false}, std::tuple{-2, true});

// A logical expression whose value is a tensor (not a condition).
AG_FUNCTION Tensor logical_value(Tensor x, Tensor y) {
  Tensor any = x > 0 || y > 0;
  Tensor all = x > 0 && !(y > 0);
  return ag::cast(any, ag::int32) * 10 + ag::cast(all, ag::int32);
}
AG_E2E(logical_value, std::tuple{1, -1}, std::tuple{-1, 1}, std::tuple{-1, -1});
