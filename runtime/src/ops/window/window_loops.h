// agc's own loops for the sliding-window ops: the convolutions in float64 (oneDNN computes
// float32), and pooling in both. NHWC data, HWIO filters; the channel loop innermost, where
// the data is contiguous. Outputs are fully written (gradients zero their result first).
#pragma once

#include "window_geometry.h"

namespace ag::detail {

template <class T>
void conv2d_loops(const WindowGeometry& g, const T* x, const T* w, T* y);
template <class T>
void conv2d_backprop_input_loops(const WindowGeometry& g, const T* dy, const T* w, T* dx);
template <class T>
void conv2d_backprop_filter_loops(const WindowGeometry& g, const T* x, const T* dy, T* dw);
// MaxPool / AvgPool: y from x. MaxPoolGrad / AvgPoolGrad: dx from x and dy (the max's
// gradient goes to the first maximum of each window; the average's spreads over the window's
// elements inside the input, padding not counted, as TensorFlow does).
template <class T>
void pool_loops(OpKind op, const WindowGeometry& g, const T* x, const T* dy, T* out);

}  // namespace ag::detail
