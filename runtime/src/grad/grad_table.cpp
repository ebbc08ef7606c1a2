// The gradient rule of each op, from ops.def's Gradient column; and the canary: a rule made
// deliberately wrong on request, so that a test can prove the gradient checks catch one.
#include <atomic>
#include <string_view>

#include "ag/detail/tape.h"
#include "rules.h"

namespace ag::detail {
namespace {

constexpr GradRule kRules[] = {
#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Raises, Cost, Vector, Gradient, Api, ApiName, Equivalent) \
  std::string_view(#Gradient) == "none" ? nullptr : &grad_##Gradient,
#include "ag/graph/ops.def"
};

std::atomic<int> g_canary{-1};

// The true rule's input gradients, 1% too large.
std::vector<Tensor> canary_rule(const GradContext& c) {
  std::vector<Tensor> grads = kRules[static_cast<int>(c.op)](c);
  for (Tensor& g : grads)
    if (g.has_value()) g = g * 1.01;
  return grads;
}

}  // namespace

GradRule grad_rule(OpKind op) {
  if (static_cast<int>(op) == g_canary.load(std::memory_order_relaxed)) [[unlikely]]
    if (kRules[static_cast<int>(op)]) return &canary_rule;
  return kRules[static_cast<int>(op)];
}

void set_gradient_canary(std::optional<OpKind> op) { g_canary.store(op ? static_cast<int>(*op) : -1); }

}  // namespace ag::detail
