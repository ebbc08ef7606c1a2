// Node attributes. One flat struct rather than a map: cheap to build on the eager hot path,
// and each op documents which fields it reads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ag/dtype.h"
#include "ag/shape.h"
#include "ag/tensor.h"

namespace ag::detail {
struct VariableState;
struct Callback;
}

namespace ag {

struct Attrs {
  // Cast: target dtype. Fill/FillLike/Range/Random*: result dtype. ListWrite etc.: element dtype.
  DType dtype = DType::Float32;
  // Reshape: target shape (one dim may be -1). Fill/Random*: result shape. Slice: sizes (-1 = to end).
  // ListStack: the element shape known while tracing, for a list that turns out empty and
  // untyped at run time (a loop that ran no iteration).
  Shape shape;
  // A slot of integers: perm(), axes(), slice_begin(), tensor_mask() (below).
  Shape ints;
  // Concat/Gather/ExpandDims/ArgMax/ArgMin/Cumsum/Cumprod/ArgSort/TakeAlongAxis: axis. Also the slot of param_index(),
  // loop_vars() and padding() (below).
  int64_t axis = 0;
  // Reduce: keepdims.
  bool keepdims = false;
  // Fill/FillLike: value. RandomUniform: minval (scalar), maxval (scalar2). RandomNormal: mean
  // (scalar), stddev (scalar2).
  double scalar = 0;
  double scalar2 = 0;
  // Const: the value.
  Tensor value;
  // ReadVariable / Assign*Variable: the variable, captured by reference. RandomUniform /
  // RandomNormal: the generator's state, int64[2] = {seed, counter}.
  std::shared_ptr<detail::VariableState> variable;
  // PureCallback / IoCallback: the C++ function (ag/callback.h); dtype and shape: the result spec.
  std::shared_ptr<const detail::Callback> callback;
  // Print: the text pieces; tensor_mask() marks which argument positions are tensors (1) or text (0).
  // Assert: {message, what was asserted ("ag::assert_equal(x, y)")}.
  std::vector<std::string> strings;

  // ---- Each meaning of a shared slot under its own name. Code that knows the op uses these;
  // generic code (graph keys, CSE, copies) works on the slots, so a new meaning needs no change
  // there. (Mutable overloads set them.)
  const Shape& perm() const { return ints; }         // Transpose
  Shape& perm() { return ints; }
  const Shape& axes() const { return ints; }         // Reduce*, Squeeze: normalized, sorted
  Shape& axes() { return ints; }
  const Shape& slice_begin() const { return ints; }  // Slice, SliceUpdate
  Shape& slice_begin() { return ints; }
  // Slice: sizes; -1 = to the end of the dim, -k = through dim - k + 1 (NumPy's stop -k + 1 on
  // a dim known only at run time; an empty range when that is before begin).
  const Shape& slice_size() const { return shape; }
  Shape& slice_size() { return shape; }
  const Shape& scan_flags() const { return ints; }   // Cumsum/Cumprod: {exclusive, reverse}, 0 or 1
  Shape& scan_flags() { return ints; }
  const Shape& window() const { return ints; }      // Window ops: strides and dilations, or ksize and strides
  Shape& window() { return ints; }                  //   (ops/window/window_geometry.h)
  const Shape& sort_flags() const { return ints; }  // ArgSort: {descending}, 0 or 1
  Shape& sort_flags() { return ints; }
  // MatMul: {transpose_a, transpose_b}, 0 or 1; empty = neither (the graph of a plain product).
  bool transpose_a() const { return ints.rank() == 2 && ints[0] != 0; }
  bool transpose_b() const { return ints.rank() == 2 && ints[1] != 0; }
  void set_transposes(bool a, bool b) { ints = a || b ? Shape{a ? 1 : 0, b ? 1 : 0} : Shape{}; }
  const Shape& tensor_mask() const { return ints; }  // Print: 1 where argument i is a tensor
  Shape& tensor_mask() { return ints; }
  int64_t param_index() const { return axis; }       // Placeholder: its parameter's position
  int64_t& param_index() { return axis; }
  int64_t padding() const { return axis; }           // Window ops: 0 VALID, 1 SAME
  int64_t& padding() { return axis; }
  int64_t loop_vars() const { return axis; }         // While: the first loop_vars inputs are carried
  int64_t& loop_vars() { return axis; }
  // FusedConv2D: a relu follows the bias (passes/fuse_conv_epilogues.cpp).
  bool fused_relu() const { return keepdims; }
  bool& fused_relu() { return keepdims; }
  // While, in the JIT's plan only (jit/src/per_element_loops.h): its cond and body take one
  // element of each loop variable, and the loop runs once per element.
  bool per_element() const { return keepdims; }
  bool& per_element() { return keepdims; }

  static const Attrs& none();
};

}  // namespace ag
