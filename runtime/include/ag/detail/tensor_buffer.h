// TensorBuffer<N>: `count` tensors in inline storage when count <= N (no heap), for the
// cached-call path, which must allocate nothing but its outputs.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

#include "ag/tensor.h"

namespace ag::detail {

template <size_t N>
class TensorBuffer {
 public:
  explicit TensorBuffer(size_t count) : count_(count) {
    data_ = count <= N ? reinterpret_cast<Tensor*>(inline_) : static_cast<Tensor*>(::operator new(count * sizeof(Tensor)));
    std::uninitialized_default_construct_n(data_, count);
  }
  ~TensorBuffer() {
    std::destroy_n(data_, count_);
    if (count_ > N) ::operator delete(data_);
  }
  TensorBuffer(const TensorBuffer&) = delete;
  TensorBuffer& operator=(const TensorBuffer&) = delete;

  Tensor* data() { return data_; }
  size_t size() const { return count_; }
  Tensor& operator[](size_t i) { return data_[i]; }

 private:
  alignas(Tensor) unsigned char inline_[N * sizeof(Tensor)];
  Tensor* data_;
  size_t count_;
};

}  // namespace ag::detail
