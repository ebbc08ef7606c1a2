// TensorSpec: the dtype and shape a traced function accepts; -1 is an unknown dim.
#pragma once

#include <string>

#include "ag/dtype.h"
#include "ag/shape.h"
#include "ag/tensor.h"

namespace ag {

class TensorSpec {
 public:
  TensorSpec(Shape shape, DType dtype, std::string name = {})
      : shape_(std::move(shape)), dtype_(dtype), name_(std::move(name)) {}
  // Matches any shape (TensorFlow's TensorSpec(shape=None)). A function traces once per rank.
  static TensorSpec unknown_rank(DType dtype, std::string name = {}) {
    TensorSpec s(Shape{}, dtype, std::move(name));
    s.unknown_rank_ = true;
    return s;
  }
  static TensorSpec from_tensor(const Tensor& t, std::string name = {}) { return TensorSpec(t.shape(), t.dtype(), std::move(name)); }

  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  const std::string& name() const { return name_; }
  bool has_unknown_rank() const { return unknown_rank_; }

  // dtype equal and shape compatible (unknown dims match anything).
  bool is_compatible_with(const Tensor& t) const {
    return t.dtype() == dtype_ && (unknown_rank_ || shape_.is_compatible_with(t.shape()));
  }
  // TensorSpec(shape=(None, 3), dtype=float32, name='x')
  std::string str() const;

  friend bool operator==(const TensorSpec& a, const TensorSpec& b) {
    return a.dtype_ == b.dtype_ && a.unknown_rank_ == b.unknown_rank_ && a.shape_ == b.shape_;
  }

 private:
  Shape shape_;
  DType dtype_;
  std::string name_;
  bool unknown_rank_ = false;
};

}  // namespace ag
