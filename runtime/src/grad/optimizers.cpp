// SGD and Adam: updates written with the public ops and Variable assignments, so they run eagerly
// and are traced (and compiled) inside a Function alike.
#include "ag/optimizers.h"

#include <fmt/format.h>

#include "ag/construct.h"
#include "ag/detail/tape.h"
#include "ag/ops.h"

namespace ag::optimizers {

Variable& Optimizer::slot(const Variable& v, int index) {
  auto& slots = slots_[v.state().get()];
  if (slots.empty())
    for (int i = 0; i < num_slots(); ++i)
      slots.push_back(std::make_unique<Variable>(zeros(v.shape(), v.dtype()), fmt::format("{}/slot{}", v.name(), i)));
  return *slots[static_cast<size_t>(index)];
}

Tensor Optimizer::iterations() const { return iterations_ ? iterations_->value() : Tensor(int64_t{0}); }

void Optimizer::apply_gradients(const std::vector<std::pair<Tensor, Variable*>>& grads_and_vars,
                                std::source_location loc) {
  const detail::CallerLocScope at_caller(loc);  // the update's nodes name the user's line
  if (!iterations_) iterations_ = std::make_unique<Variable>(Tensor(int64_t{0}), "iterations");
  const Tensor step = iterations_->assign_add(int64_t{1});
  for (const auto& [g, v] : grads_and_vars) {
    if (!g.has_value()) continue;
    if (!v) throw ValueError("apply_gradients: a null Variable pointer");
    if (!is_floating(v->dtype()))
      throw TypeError(fmt::format("apply_gradients: Variable '{}' is {}, not a floating-point type", v->name(),
                                  dtype_name(v->dtype())));
    update(*v, cast(g, v->dtype()), cast(step, v->dtype()));
  }
}

SGD::SGD(double learning_rate, double momentum) : Optimizer(learning_rate), momentum_(momentum) {}

void SGD::update(Variable& v, const Tensor& g, const Tensor&) {
  if (momentum_ == 0) {
    v.assign_sub(g * learning_rate_);
    return;
  }
  Variable& velocity = slot(v, 0);
  const Tensor next = velocity.assign(velocity * momentum_ - g * learning_rate_);
  v.assign_add(next);
}

Adam::Adam(double learning_rate, double beta1, double beta2, double epsilon)
    : Optimizer(learning_rate), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {}

void Adam::update(Variable& v, const Tensor& g, const Tensor& step) {
  Variable& m = slot(v, 0);
  Variable& s = slot(v, 1);
  const Tensor m_t = m.assign(m * beta1_ + g * (1 - beta1_));
  const Tensor s_t = s.assign(s * beta2_ + g * g * (1 - beta2_));
  const Tensor b1 = pow(cast(Tensor(beta1_), v.dtype()), step);  // beta1^t
  const Tensor b2 = pow(cast(Tensor(beta2_), v.dtype()), step);
  const Tensor lr = sqrt(1 - b2) / (1 - b1) * learning_rate_;
  v.assign_sub(lr * m_t / (sqrt(s_t) + epsilon_));
}

}  // namespace ag::optimizers
