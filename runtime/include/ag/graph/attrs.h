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
}

namespace ag {

struct Attrs {
  // Cast: target dtype. Fill/FillLike/Range/Random*: result dtype. ListWrite etc.: element dtype.
  DType dtype = DType::Float32;
  // Reshape: target shape (one dim may be -1). Fill/Random*: result shape. Slice: sizes (-1 = to end).
  // ListStack: the element shape known while tracing, for a list that turns out empty and
  // untyped at run time (a loop that ran no iteration).
  Shape shape;
  // Transpose: perm. Reduce: axes (normalized, sorted). Slice: begin. Squeeze: axes.
  Shape ints;
  // Concat/Gather/ExpandDims/ArgMax/ArgMin: axis. Placeholder: parameter index.
  // While: number of loop variables (the remaining inputs are loop invariants).
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
  // Print: the text pieces; `ints` marks which argument positions are tensors (1) or text (0).
  // Assert: {message, what was asserted ("ag::assert_equal(x, y)")}.
  std::vector<std::string> strings;

  static const Attrs& none();
};

}  // namespace ag
