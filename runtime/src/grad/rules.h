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

struct GradContext {
  OpKind op;
  const Attrs& attrs;
  SourceLoc loc;
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;
  std::span<const Tensor> dys;  // one per output, each with a value (zeros where none flowed)
  const std::vector<std::shared_ptr<const Graph>>& subgraphs;
};

// The gradient of each input (a Tensor without a value: none flows to that input).
using GradRule = std::vector<Tensor> (*)(const GradContext&);

// The rule of `op` (nullptr: its Gradient is `none`).
GradRule grad_rule(OpKind op);

// `g` (the gradient of a broadcast result) summed down to the shape of `x`, as TensorFlow's
// BroadcastGradientArgs + reduce_sum do.
Tensor unbroadcast(const Tensor& g, const Tensor& x, SourceLoc loc);

// The gradient of a staged If with inputs [pred, x...] and output gradients `dys`: an If whose
// branches replay the forward branches under a tape (tape.cpp).
std::vector<Tensor> staged_if_gradient(std::span<const Tensor> inputs, std::span<const Tensor> dys,
                                       const Graph& then_graph, const Graph& else_graph, SourceLoc loc);

#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Jit, Gradient, Api, ApiName) \
  std::vector<Tensor> grad_##Gradient(const GradContext& c);
#include "ag/graph/ops.def"

}  // namespace ag::detail
