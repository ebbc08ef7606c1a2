// The forward/backward pair of a concrete function called under an eager tape (TensorFlow's):
// made once per forward signature from the forward graph and cached on its ConcreteCore. The
// joint graph (the forward replayed under a tape, then its gradient) is split where the output
// gradients enter (split_residuals.h): the forward half runs in place of the plain forward and
// also returns the residuals, the intermediates the backward reads; the backward half takes them
// and the output gradients. Both are optimized and compiled like any graph. The tape records the
// call as one op holding the residuals.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ag/backend.h"
#include "ag/graph/graph.h"
#include "ag/tensor.h"
#include "connectivity.h"
#include "rules.h"

namespace ag::detail {

class FunctionCore;

class CallBackward {
 public:
  CallBackward(std::shared_ptr<const Graph> forward, const std::string& forward_name, std::optional<bool> jit);

  // The forward under a tape: its outputs, and the residuals its backward needs (returned).
  std::vector<Tensor> run_forward(std::span<const Tensor> inputs, std::span<Tensor> outputs) const;
  // The gradients of the forward's inputs (floating-point ones; the others no value) for the
  // gradients `dys` of its outputs (floating-point ones with a value); the gradients of the
  // Variables the forward reads go to `variable_grads`. While another tape records (higher
  // order), the backward runs as a Function that recomputes the forward from `inputs`, so that
  // the tape records it as one op in turn.
  // Inputs and Variables that no `reached` output depends on get no gradient (TF's None).
  std::vector<Tensor> run(std::span<const Tensor> inputs, std::span<const Tensor> residuals,
                          std::span<const Tensor> dys, const std::vector<bool>& reached,
                          std::vector<VariableGrad>& variable_grads) const;
  bool reads_variables() const { return !variables_.empty(); }
  const std::vector<std::shared_ptr<VariableState>>& variables() const { return variables_; }

 private:
  std::vector<Tensor> trace_joint(std::span<const Tensor> placeholders, std::vector<Tensor>* forward_outputs) const;
  std::vector<Tensor> grads_of(std::span<Tensor> out, size_t num_inputs, const std::vector<bool>& reached,
                               std::vector<VariableGrad>& variable_grads) const;

  std::shared_ptr<const Graph> forward_;
  std::vector<size_t> wrt_;  // the floating-point inputs
  std::vector<size_t> float_outputs_;
  std::vector<std::shared_ptr<VariableState>> variables_;
  std::vector<SourceSet> sources_;  // per output: the inputs and variables_ it depends on
  size_t num_residuals_ = 0;
  std::unique_ptr<Executable> forward_exe_;   // (x...) -> (y..., residuals...)
  std::unique_ptr<Executable> backward_exe_;  // (residuals..., dy...) -> (d inputs..., d variables...)
  std::shared_ptr<FunctionCore> recorded_;    // (x..., dy...) -> the same, recomputing the forward
};

// Whether a call of `g` can be recorded as one op: no side effects but Variable reads (the
// backward replays the forward), no TensorArray in or out, every rank known.
bool differentiable_as_a_call(const Graph& g);

}  // namespace ag::detail
