// ag::Tensor: an immutable n-d array (concrete), or a value in a graph being traced (symbolic).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <string>
#include <type_traits>
#include <vector>

#include "ag/detail/tensor_impl.h"
#include "ag/dtype.h"
#include "ag/error.h"
#include "ag/index.h"
#include "ag/shape.h"

namespace ag {

template <class T>
concept Arithmetic = std::is_arithmetic_v<T>;

class Tensor;
class IndexUpdate;  // ag/indexing.h
namespace detail {
// The implementation behind a tensor, and a tensor taking over one reference to one: for the
// runtime, the JIT and white-box tests, not part of the public API.
TensorImpl* impl_of(const Tensor& t) noexcept;
Tensor adopt(TensorImpl* impl) noexcept;
}  // namespace detail

class Tensor {
 public:
  // A default-constructed Tensor has no value: C++'s counterpart of an unassigned Python
  // variable. Reading it raises an error.
  Tensor() noexcept = default;
  // Scalar constants; the dtype follows the C++ type (float -> float32, int -> int32, ...).
  template <Arithmetic T>
  Tensor(T v)  // NOLINT: implicit on purpose
      : Tensor(make_scalar(dtype_of<T>(), detail::convert_value<double>(v), detail::convert_value<int64_t>(v))) {}

  Tensor(const Tensor& o) noexcept : impl_(o.impl_) {
    if (impl_) impl_->retain();
  }
  Tensor(Tensor&& o) noexcept : impl_(o.impl_) { o.impl_ = nullptr; }
  Tensor& operator=(const Tensor& o) noexcept {
    if (o.impl_) o.impl_->retain();
    reset(o.impl_);
    return *this;
  }
  Tensor& operator=(Tensor&& o) noexcept {
    if (this != &o) {
      reset(o.impl_);
      o.impl_ = nullptr;
    }
    return *this;
  }
  ~Tensor() {
    if (impl_) impl_->release();
  }

  bool has_value() const { return impl_ != nullptr && impl_->kind != detail::ImplKind::Undefined; }
  bool is_symbolic() const { return impl_ != nullptr && impl_->kind == detail::ImplKind::Symbolic; }
  DType dtype() const { return checked().dtype; }
  // Static shape; a symbolic tensor may have unknown (-1) dims, or even an unknown rank (traced
  // from TensorSpec::unknown_rank, or given different ranks by the branches of a staged if):
  // then shape(), rank() and num_elements() raise ValueError; ask has_unknown_rank() first, or
  // use ag::shape_of for the run-time shape.
  const Shape& shape() const { return known_rank().shape; }
  int64_t rank() const { return known_rank().shape.rank(); }
  int64_t num_elements() const { return known_rank().shape.num_elements(); }
  bool has_unknown_rank() const { return checked().rank_unknown && impl_->dtype != DType::List; }

  // The single element of a concrete scalar (or 1-element) tensor, converted to T as ag::cast
  // converts (floating -> integer saturates, bool is != 0).
  template <class T>
  T item() const;
  // The elements of a concrete tensor in row-major order, converted to T as item<T>() does.
  template <class T>
  std::vector<T> to_vector() const;
  // The buffer of a concrete tensor; T must be its element type exactly.
  template <class T>
  const T* data() const;

  // True/false of a concrete scalar. On a symbolic tensor: ConversionError (the function's
  // control flow must be converted by ag-rewrite).
  explicit operator bool() const;

  // Index along axis 0: x[i] has rank - 1. Negative i counts from the end.
  Tensor operator[](int64_t i) const;
  Tensor operator[](const Tensor& i) const;

  // NumPy-style indexing (ag/indexing.h): x(ag::Slice{1, -1}, ag::all, 0, ag::newaxis), one
  // index per dim (missing trailing dims are whole), integers drop their dim.
  Tensor operator()(Index i0) const { return index({i0}); }
  Tensor operator()(Index i0, Index i1) const { return index({i0, i1}); }
  Tensor operator()(Index i0, Index i1, Index i2) const { return index({i0, i1, i2}); }
  Tensor operator()(Index i0, Index i1, Index i2, Index i3) const { return index({i0, i1, i2, i3}); }
  Tensor operator()(Index i0, Index i1, Index i2, Index i3, Index i4) const { return index({i0, i1, i2, i3, i4}); }
  Tensor operator()(Index i0, Index i1, Index i2, Index i3, Index i4, Index i5) const {
    return index({i0, i1, i2, i3, i4, i5});
  }
  Tensor index(std::initializer_list<Index> indices) const;
  // JAX's functional updates (ag/indexing.h): x.at(ag::Slice{1, -1}).set(v) returns x with the
  // indexed box replaced by v (broadcast); .add(v), .get().
  IndexUpdate at(Index i0) const;
  IndexUpdate at(Index i0, Index i1) const;
  IndexUpdate at(Index i0, Index i1, Index i2) const;
  IndexUpdate at(Index i0, Index i1, Index i2, Index i3) const;

  // Range-for iterates the first dimension (concrete tensors only).
  class iterator {
   public:
    iterator(const Tensor* t, int64_t i) : t_(t), i_(i) {}
    Tensor operator*() const { return (*t_)[i_]; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const iterator& o) const { return i_ != o.i_; }
    bool operator==(const iterator& o) const { return i_ == o.i_; }

   private:
    const Tensor* t_;
    int64_t i_;
  };
  iterator begin() const;
  iterator end() const;

  // tf.Tensor([1 2], shape=(2,), dtype=int32)
  std::string str() const;

  // Internal.
  static Tensor make_scalar(DType dtype, double fvalue, int64_t ivalue);

 private:
  friend detail::TensorImpl* detail::impl_of(const Tensor& t) noexcept;
  friend Tensor detail::adopt(detail::TensorImpl* impl) noexcept;

  const detail::TensorImpl& checked() const {
    if (!impl_ || impl_->kind == detail::ImplKind::Undefined) throw_no_value();
    return *impl_;
  }
  const detail::TensorImpl& known_rank() const {
    const detail::TensorImpl& impl = checked();
    if (impl.rank_unknown && impl.dtype != DType::List) [[unlikely]] throw_unknown_rank();
    return impl;
  }
  [[noreturn]] void throw_no_value() const;
  [[noreturn]] void throw_unknown_rank() const;
  void reset(detail::TensorImpl* p) noexcept {
    if (impl_) impl_->release();
    impl_ = p;
  }

  detail::TensorImpl* impl_ = nullptr;
};

namespace detail {
inline TensorImpl* impl_of(const Tensor& t) noexcept { return t.impl_; }
inline Tensor adopt(TensorImpl* impl) noexcept {
  Tensor t;
  t.impl_ = impl;
  return t;
}
// A concrete tensor with an uninitialized 64-byte-aligned buffer.
Tensor make_tensor(DType dtype, const Shape& shape);
// A concrete tensor viewing `storage` at `byte_offset` (retains the storage).
Tensor make_view(Storage* storage, size_t byte_offset, DType dtype, const Shape& shape);
// An Undefined tensor whose reads raise ConversionError(`message`).
Tensor make_undefined(std::string message);
// Throws the error an Undefined or valueless tensor raises when read by `what`.
[[noreturn]] void throw_undefined(const Tensor& t, const char* what, SourceLoc loc);
double element_as_double(const Tensor& t, int64_t i);
int64_t element_as_int(const Tensor& t, int64_t i);
void require_concrete(const Tensor& t, const char* what);
// The TypeError of data<T>() when T is not the C++ type of `actual`.
[[noreturn]] void throw_data_type_mismatch(DType actual, DType t_dtype, size_t t_size);
}  // namespace detail

template <class T>
T Tensor::item() const {
  detail::require_concrete(*this, "item()");
  if (num_elements() != 1)
    throw ValueError("item() needs a tensor with exactly one element, got shape " + shape().str());
  return visit_dtype(dtype(), [&](auto tag) {
    using E = decltype(tag);
    return detail::convert_value<T>(*static_cast<const E*>(impl_->data));
  });
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  detail::require_concrete(*this, "to_vector()");
  const int64_t n = num_elements();
  std::vector<T> out(static_cast<size_t>(n));
  visit_dtype(dtype(), [&](auto tag) {
    using E = decltype(tag);
    const E* p = static_cast<const E*>(impl_->data);
    for (int64_t i = 0; i < n; ++i) out[i] = detail::convert_value<T>(p[i]);
  });
  return out;
}

template <class T>
const T* Tensor::data() const {
  detail::require_concrete(*this, "data()");
  if (element_dtype_of<T>() != dtype() || sizeof(T) != dtype_size(dtype()))
    detail::throw_data_type_mismatch(dtype(), element_dtype_of<T>(), sizeof(T));
  return static_cast<const T*>(impl_->data);
}

}  // namespace ag
