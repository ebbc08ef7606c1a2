// ag::TensorArray: a list of same-typed tensors that staged loops can grow (tf.TensorArray).
#pragma once

#include <cstdint>

#include "ag/ops.h"
#include "ag/tensor.h"

namespace ag {

class TensorArray {
 public:
  // infer_shape = false (TensorFlow's): the elements may have different shapes (stack() still
  // needs them to agree).
  TensorArray(DType dtype, int64_t size = 0, bool dynamic_size = true, bool infer_shape = true);

  // Writes element `index` of this array and returns the updated array. Both spellings work,
  // eagerly and staged: `ta.write(i, v);` and TensorFlow's `ta = ta.write(i, v)`. It is a
  // mutating member, so inside staged control flow ag-rewrite carries `ta` as state, as it
  // does an assigned variable (while tracing, the write rebinds this array to the updated
  // handle; eagerly it updates the elements in place).
  TensorArray write(Operand index, const Tensor& value);
  Tensor read(Operand index) const;
  // All elements stacked along a new axis 0 (unwritten elements are zeros).
  Tensor stack() const;
  // The number of elements, an int32 scalar.
  Tensor size() const;
  DType dtype() const { return dtype_; }

  // Internal: the handle, a scalar tensor of dtype List (concrete or symbolic).
  const Tensor& handle() const { return handle_; }
  Tensor& handle() { return handle_; }
  static TensorArray from_handle(Tensor handle, DType dtype);

 private:
  TensorArray() = default;
  Tensor handle_;
  DType dtype_ = DType::Float32;
};

}  // namespace ag
