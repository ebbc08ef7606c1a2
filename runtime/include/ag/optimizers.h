// Optimizers that apply gradients to Variables (tf.keras.optimizers.SGD and Adam).
//
// apply_gradients works eagerly and inside a Function (then the update is part of its graph:
// forward, backward and update compile into one concrete function). Slot variables (momentum,
// Adam's moments and step) are created on the first apply for each Variable; inside a Function
// that is allowed on its first trace only (TensorFlow's singleton rule: a later trace raises
// ValueError, as when one Function is traced with two different optimizers).
#pragma once

#include <memory>
#include <source_location>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ag/tensor.h"
#include "ag/variable.h"

namespace ag::optimizers {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Applies each (gradient, variable) pair; a pair whose gradient has no value is skipped. The
  // update's graph nodes carry `loc`, the caller's line.
  void apply_gradients(const std::vector<std::pair<Tensor, Variable*>>& grads_and_vars,
                       std::source_location loc = std::source_location::current());
  // The number of apply_gradients calls so far (a Variable: inside a Function, one per call).
  Tensor iterations() const;

 protected:
  explicit Optimizer(double learning_rate) : learning_rate_(learning_rate) {}
  // The slot variables of `v`, created (zeros of its shape) on first use.
  Variable& slot(const Variable& v, int index);
  virtual int num_slots() const = 0;
  // One update of `v` by `g`; `step` is the 1-based step count as a float of v's dtype.
  virtual void update(Variable& v, const Tensor& g, const Tensor& step) = 0;

  double learning_rate_;

 private:
  std::unordered_map<const void*, std::vector<std::unique_ptr<Variable>>> slots_;
  std::unique_ptr<Variable> iterations_;
};

// v -= lr * g, or with momentum m: velocity = m * velocity - lr * g; v += velocity.
class SGD final : public Optimizer {
 public:
  explicit SGD(double learning_rate = 0.01, double momentum = 0.0);

 private:
  int num_slots() const override { return momentum_ != 0 ? 1 : 0; }
  void update(Variable& v, const Tensor& g, const Tensor& step) override;
  double momentum_;
};

// Adam (Kingma & Ba), as Keras computes it: bias-corrected step size, epsilon outside the sqrt.
class Adam final : public Optimizer {
 public:
  explicit Adam(double learning_rate = 0.001, double beta1 = 0.9, double beta2 = 0.999, double epsilon = 1e-7);

 private:
  int num_slots() const override { return 2; }
  void update(Variable& v, const Tensor& g, const Tensor& step) override;
  double beta1_, beta2_, epsilon_;
};

}  // namespace ag::optimizers
