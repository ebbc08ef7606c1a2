// The sliding-window ops (conv2d, its gradients, pooling) on concrete buffers: the eager
// kernel and compiled code (through a runtime helper) run the same code.
#pragma once

#include <cstdint>
#include <span>

#include "ag/graph/graph.h"
#include "ag/tensor.h"

namespace ag::detail {

// Computes Window op `op` on concrete inputs into `out`, a buffer of the result's shape (the
// one infer_type gives for these inputs, which also checked them).
void compute_window(OpKind op, std::span<const Tensor> in, const Attrs& attrs, void* out);

// Convolutions oneDNN has computed since the process started (tests check that float32
// convolutions take that path, eagerly and from compiled code).
uint64_t onednn_conv_calls();

}  // namespace ag::detail
