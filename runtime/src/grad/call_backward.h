// The backward of a concrete function called under an eager tape (TensorFlow's forward/backward
// function pair): a second Function, traced from the forward graph once per forward signature,
// optimized and compiled like any other and cached on the forward's ConcreteCore. The tape then
// records the call as one op, and its gradient is one call of compiled code.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ag/graph/graph.h"
#include "ag/tensor.h"
#include "rules.h"

namespace ag::detail {

class FunctionCore;

class CallBackward {
 public:
  CallBackward(std::shared_ptr<const Graph> forward, const std::string& forward_name, std::optional<bool> jit);

  // The gradients of the forward's inputs (floating-point ones; the others no value) for the
  // gradients `dys` of its outputs (floating-point ones with a value); the gradients of the
  // Variables the forward reads go to `variable_grads`.
  std::vector<Tensor> run(std::span<const Tensor> inputs, std::span<const Tensor> dys,
                          std::vector<VariableGrad>& variable_grads) const;
  bool reads_variables() const { return !variables_.empty(); }

 private:
  std::shared_ptr<const Graph> forward_;
  std::vector<size_t> wrt_;          // the floating-point inputs
  std::vector<size_t> float_outputs_;
  std::vector<std::shared_ptr<VariableState>> variables_;
  std::shared_ptr<FunctionCore> core_;  // (inputs..., d outputs...) -> (d inputs..., d variables...)
};

// Whether a call of `g` can be recorded as one op: no side effects but Variable reads (the
// backward replays the forward), no TensorArray in or out.
bool differentiable_as_a_call(const Graph& g);

// A process-wide count of backward calls run, for the tests that check this path ran.
uint64_t call_backward_runs();

}  // namespace ag::detail
