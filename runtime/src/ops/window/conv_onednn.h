// float32 convolutions (Conv2D and its two backprop ops) through oneDNN, the CPU engine under
// TensorFlow and PyTorch: a primitive per op and geometry, made on first use and cached.
#pragma once

#include <cstdint>

#include "window_geometry.h"

namespace ag::detail {

// Computes `op` (a Conv2D* op) on NHWC/HWIO float32 buffers: (x, w) -> y, (dy, w) -> dx or
// (x, dy) -> dw. False when oneDNN has no implementation for this geometry (the caller falls
// back to agc's loops; AG_LOG=kernels says so).
bool onednn_conv(OpKind op, const WindowGeometry& g, const float* a, const float* b, float* out);

// FusedConv2D's convolution with its bias added by oneDNN to each finished sum (x, w, bias ->
// y; its relu is the caller's). False when oneDNN's kernel for this geometry is not brgconv,
// which alone is known to add the bias as an Add after the convolution would, bit for bit
// (the caller then runs onednn_conv and adds the bias itself).
bool onednn_conv_bias(const WindowGeometry& g, const float* x, const float* w, const float* bias, float* out);

}  // namespace ag::detail
