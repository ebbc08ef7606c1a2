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

// BorrowedTensors<N>: non-owning copies of tensors that outlive it (a call's arguments), laid
// out as a span of Tensor. Copying skips the reference counting, two atomic operations per
// argument on the cached-call path; the copies are never destroyed, so nothing is released.
// Whoever keeps one of them copies it, which retains as usual.
template <size_t N>
class BorrowedTensors {
 public:
  explicit BorrowedTensors(size_t capacity)
      : data_(capacity <= N ? reinterpret_cast<Tensor*>(inline_)
                            : static_cast<Tensor*>(::operator new(capacity * sizeof(Tensor)))),
        heap_(capacity > N) {}
  ~BorrowedTensors() {
    if (heap_) ::operator delete(data_);
  }
  BorrowedTensors(const BorrowedTensors&) = delete;
  BorrowedTensors& operator=(const BorrowedTensors&) = delete;

  void push_back(const Tensor& t) { ::new (static_cast<void*>(data_ + size_++)) Tensor(detail::adopt(detail::impl_of(t))); }
  const Tensor* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  alignas(Tensor) unsigned char inline_[N * sizeof(Tensor)];
  Tensor* data_;
  size_t size_ = 0;
  bool heap_;
};

}  // namespace ag::detail
