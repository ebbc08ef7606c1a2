// The ops whose compiled form calls the eager kernel's code on compiled code's buffers: the
// Window family (conv2d, its gradients, pooling) and the Index family (argsort,
// take_along_axis, scatters, segment reductions). Library code (oneDNN) or data-dependent
// loops that gain nothing from being generated: a new op of these families needs no lowering.
#pragma once

#include <cstdint>
#include <span>

#include "ag/graph/graph.h"
#include "ag/tensor.h"

namespace ag::detail {

// Whether compiled code runs `op` through compute_into (the JIT's lower_runtime_kernel.cpp).
inline bool runs_runtime_kernel(OpKind op) {
  return op_class(op) == OpClass::Window || op_class(op) == OpClass::Index;
}

// Computes `op` on concrete inputs into `out`, a buffer of the result's shape (the one
// infer_type gives for these inputs, which also checked them). Errors on values (an index out
// of range) are InvalidArgumentErrors naming the op and `loc`.
void compute_into(OpKind op, std::span<const Tensor> in, const Attrs& attrs, void* out, SourceLoc loc);

// Convolutions oneDNN has computed since the process started (tests check that float32
// convolutions take that path, eagerly and from compiled code).
uint64_t onednn_conv_calls();
// Of those, FusedConv2D's with the bias added by oneDNN (tests check the fused path ran).
uint64_t onednn_conv_bias_calls();

}  // namespace ag::detail
