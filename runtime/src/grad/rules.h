// Gradient rules: one function per Gradient token of ops.def, `grad_<token>`, grouped by op family
// (rules_elementwise.cpp, rules_reduce.cpp, rules_layout.cpp, rules_control.cpp). A rule is written
// with the public ops, so it runs eagerly and while tracing alike, and a tape recording around the
// backward pass records it (higher-order gradients).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "ag/graph/graph.h"
#include "ag/ops.h"
#include "ag/tensor.h"

namespace ag::detail {

struct VariableState;
struct ReplayHooks;

// The gradient of a Variable that a sub-graph reads (If/While rules report these: the Variable is
// not one of the node's inputs).
struct VariableGrad {
  const VariableState* variable;
  Tensor grad;
};

struct GradContext {
  OpKind op;
  const Attrs& attrs;
  SourceLoc loc;
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  std::span<const Tensor> dys;  // one per output; floating-point ones have a value (zeros where none flowed)
  const std::vector<bool>& reached;  // per output: a gradient flowed to it (else its dy is zeros)
  const std::vector<std::shared_ptr<const Graph>>& subgraphs;
  std::vector<VariableGrad>& variable_grads;
};

// The gradient of each input (a Tensor without a value: none flows to that input).
using GradRule = std::vector<Tensor> (*)(const GradContext&);

// The rule of `op` (nullptr: its Gradient is `none`).
GradRule grad_rule(OpKind op);

// `g` (the gradient of a broadcast result) summed down to the shape of `x`, as TensorFlow's
// BroadcastGradientArgs + reduce_sum do.
Tensor unbroadcast(const Tensor& g, const Tensor& x, SourceLoc loc);

// Whether a gradient can flow through `t`: a floating-point tensor, or a TensorArray of them
// (whose gradient is a dense tensor of its stacked shape, rules_list.cpp).
bool carries_gradient(const Tensor& t);
// Zeros for a value no gradient reached: of its shape, or a TensorArray's stacked shape.
Tensor zero_gradient(const Tensor& t);

// Whether `g` or its sub-graphs have side effects other than Variable reads and asserts
// (assignments, prints, random draws): replaying such a graph for its gradient would repeat them.
bool has_effects_besides_reads(const Graph& g);

// The floating-point Variables that `g` or its sub-graphs read, each once.
std::vector<std::shared_ptr<VariableState>> variables_read(const Graph& g);

// Replays `g` on `xs` in the current frame under a fresh tape and returns the gradients of its
// results, weighted by `dys` (one per result; the floating-point ones with a value), with respect
// to xs[k] for each k in `wrt`, then to each of `variables`: zeros where none flows (tape.cpp).
// `forward_outputs`, when given, receives the replayed results.
std::vector<Tensor> replay_gradient(const Graph& g, std::span<const Tensor> xs, std::span<const Tensor> dys,
                                    std::span<const size_t> wrt,
                                    std::span<const std::shared_ptr<VariableState>> variables,
                                    std::vector<Tensor>* forward_outputs = nullptr,
                                    const ReplayHooks* hooks = nullptr);

// The rule of the `unsupported` token (declared here too: no op may use it at the moment).
std::vector<Tensor> grad_unsupported(const GradContext& c);

#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Raises, Cost, Vector, Gradient, Api, ApiName, Equivalent) \
  std::vector<Tensor> grad_##Gradient(const GradContext& c);
#include "ag/graph/ops.def"

}  // namespace ag::detail
