// Eigen interop: agc tensors viewing Eigen matrices, arrays and tensors, and Eigen maps viewing
// agc tensors, without a copy. Not part of <ag/ag.h>: it needs Eigen 3.4 (link Eigen3::Eigen).
//
// Layout. agc tensors are dense and row-major; Eigen matrices are column-major unless declared
// Eigen::RowMajor. Zero-copy therefore works for row-major matrices and arrays, for vectors
// (either orientation: a vector is rank 1), for row-major Eigen::Tensor/TensorMap, and for
// `m.transpose()` of a column-major matrix (a row-major view of the same memory: the tensor's
// shape is [cols, rows]). A column-major matrix itself is a compile-time error saying so:
// viewing it would silently transpose it, and copying it silently would break the promise of
// no copy. `ag::from_eigen_copy(expr)` copies any expression, in any layout, into a new tensor
// of shape [rows, cols] (a vector: [size]).
//
// Lifetime. `from_eigen(m)` of an lvalue borrows m's memory: m must outlive every tensor viewing
// it (views, Variables initialized from it, constants captured by a traced function, outputs of
// a Function that returns the input). `from_eigen(std::move(m))` of a matrix, array or
// Eigen::Tensor moves it (its heap buffer: no copy) into an owner the tensors share.
// `from_eigen(m, owner)` keeps `owner` (a shared_ptr) alive until the last tensor dies. agc never
// writes the memory; writing it yourself while a tensor views it changes that tensor (and is
// unspecified for a trace that captured it as a constant).
//
// `as_eigen<T, Rank>(t)`, `as_eigen_matrix<T>(t)`, `as_eigen_vector<T>(t)` give read-only
// Eigen::TensorMap / Eigen::Map views of a concrete tensor's buffer. They do not own it: the
// tensor (or another tensor sharing its buffer) must outlive the map. Symbolic tensors (being
// traced) have no data: a ConversionError naming the call.
#pragma once

#include <Eigen/Core>
#include <unsupported/Eigen/CXX11/Tensor>

#include <array>
#include <fmt/format.h>
#include <memory>
#include <type_traits>
#include <utility>

#include "ag/external.h"
#include "ag/tensor.h"

namespace ag {

namespace eigen_detail {

template <class T>
inline constexpr bool is_agc_scalar = std::is_same_v<T, bool> || std::is_same_v<T, int32_t> ||
                                      std::is_same_v<T, int64_t> || std::is_same_v<T, float> ||
                                      std::is_same_v<T, double>;

// A matrix, array, Map, Ref, Block or Transpose (anything Eigen's dense module makes).
template <class D>
concept DenseExpr = std::is_base_of_v<Eigen::DenseBase<D>, D>;
// An Eigen::Tensor, TensorMap or TensorFixedSize (something with a buffer and dimensions).
template <class D>
concept TensorWithData = std::is_base_of_v<Eigen::TensorBase<D, Eigen::ReadOnlyAccessors>, D> && requires(const D& t) {
  t.data();
  t.dimensions();
  D::NumIndices;
  D::Layout;
};

template <class D>
inline constexpr bool is_eigen_tensor = false;
template <class S, int N, int O, class I>
inline constexpr bool is_eigen_tensor<Eigen::Tensor<S, N, O, I>> = true;

// Known at compile time to be a vector: its tensor is rank 1, whatever Eigen's storage order.
template <class D>
inline constexpr bool is_vector = D::RowsAtCompileTime == 1 || D::ColsAtCompileTime == 1;

template <DenseExpr D>
Shape shape_of(const D& m) {
  if constexpr (is_vector<D>) return Shape{static_cast<int64_t>(m.size())};
  else return Shape{static_cast<int64_t>(m.rows()), static_cast<int64_t>(m.cols())};
}

// The compile-time rules of a zero-copy view, each with its own message; true when all hold
// (callers compile the view only then, so a broken rule gives one error, not a cascade).
template <DenseExpr D>
constexpr bool viewable() {
  constexpr bool scalar_ok = is_agc_scalar<typename D::Scalar>;
  constexpr bool direct = (int(D::Flags) & Eigen::DirectAccessBit) != 0;
  constexpr bool row_major = D::IsRowMajor || is_vector<D>;
  static_assert(scalar_ok,
                "ag::from_eigen: the scalar type has no agc dtype (agc has bool, int32_t, int64_t, float, double)");
  static_assert(!scalar_ok || direct,
                "ag::from_eigen: this Eigen expression has no buffer to view (it is computed when read); evaluate it "
                "into a matrix first, or copy it with ag::from_eigen_copy");
  static_assert(!scalar_ok || !direct || row_major,
                "ag::from_eigen: agc tensors are row-major and this Eigen matrix is column-major (Eigen's default), so "
                "it cannot be viewed without a copy. Declare it Eigen::Matrix<T, R, C, Eigen::RowMajor>, view it as "
                "its transpose with ag::from_eigen(m.transpose()) (shape [cols, rows], no copy), or copy it with "
                "ag::from_eigen_copy(m) (shape [rows, cols])");
  return scalar_ok && direct && row_major;
}

// Maps with strides and blocks of larger matrices may have gaps between elements or rows.
template <DenseExpr D>
void check_contiguous(const D& m, const char* what) {
  const bool contiguous = m.size() <= 1 || (m.innerStride() == 1 && (is_vector<D> || m.outerSize() <= 1 ||
                                                                      m.outerStride() == m.innerSize()));
  if (!contiguous)
    throw ValueError(fmt::format("{}: the Eigen {}x{} expression is not contiguous (inner stride {}, outer stride {}); "
                                 "agc tensors are dense: copy it with ag::from_eigen_copy",
                                 what, m.rows(), m.cols(), m.innerStride(), m.outerStride()));
}

template <TensorWithData D>
Shape tensor_shape(const D& t) {
  static_assert(is_agc_scalar<std::remove_const_t<typename D::Scalar>>,
                "ag::from_eigen: the scalar type has no agc dtype (agc has bool, int32_t, int64_t, float, double)");
  static_assert(int(D::Layout) == int(Eigen::RowMajor) || D::NumIndices <= 1,
                "ag::from_eigen: agc tensors are row-major and this Eigen::Tensor is column-major (Eigen's default); "
                "declare it Eigen::Tensor<T, N, Eigen::RowMajor> (or a TensorMap of one)");
  static_assert(D::NumIndices <= Shape::kMaxRank, "ag::from_eigen: agc tensors have at most 8 dims");
  Shape s;
  for (int i = 0; i < static_cast<int>(D::NumIndices); ++i) s.push_back(static_cast<int64_t>(t.dimensions()[i]));
  return s;
}

template <class T>
const T* checked_data(const Tensor& t, int64_t rank, const char* what) {
  static_assert(is_agc_scalar<T>, "ag::as_eigen: T must be bool, int32_t, int64_t, float or double");
  const void* data = detail::exported_data(t, what);
  if (t.dtype() != element_dtype_of<T>())
    throw TypeError(fmt::format("{}: the tensor's dtype is {} but T is {}", what, dtype_name(t.dtype()),
                                dtype_name(element_dtype_of<T>())));
  if (t.rank() != rank)
    throw ValueError(fmt::format("{}: the tensor has rank {} (shape {}) but the view has rank {}", what, t.rank(),
                                 t.shape().str(), rank));
  return static_cast<const T*>(data);
}

}  // namespace eigen_detail

// A tensor viewing an Eigen matrix, array, Map, Ref, Block or Transpose without a copy (see the
// top of this file for layouts and lifetimes). An rvalue matrix or array is moved into an owner.
template <class M>
  requires eigen_detail::DenseExpr<std::remove_cvref_t<M>>
Tensor from_eigen(M&& m) {
  using D = std::remove_cvref_t<M>;
  using Scalar = typename D::Scalar;
  if constexpr (!eigen_detail::viewable<D>()) {
    return Tensor();  // not reached: viewable() failed a static_assert
  } else if constexpr (!std::is_lvalue_reference_v<M> && std::is_base_of_v<Eigen::PlainObjectBase<D>, D>) {
    auto owner = std::make_shared<D>(std::move(m));  // a dynamic-size matrix's buffer moves: no copy
    const Scalar* data = owner->data();
    const Shape shape = eigen_detail::shape_of(*owner);
    return detail::make_external(data, element_dtype_of<Scalar>(), shape, std::move(owner), "ag::from_eigen");
  } else {
    eigen_detail::check_contiguous(m, "ag::from_eigen");
    return detail::make_external(m.derived().data(), element_dtype_of<Scalar>(), eigen_detail::shape_of(m), nullptr, nullptr,
                                 "ag::from_eigen");
  }
}

// The same, keeping `owner` alive until the last tensor viewing m's memory dies.
template <eigen_detail::DenseExpr D>
Tensor from_eigen(const D& m, std::shared_ptr<const void> owner) {
  if constexpr (!eigen_detail::viewable<D>()) {
    return Tensor();  // not reached: viewable() failed a static_assert
  } else {
    eigen_detail::check_contiguous(m, "ag::from_eigen");
    return detail::make_external(m.derived().data(), element_dtype_of<typename D::Scalar>(), eigen_detail::shape_of(m),
                                 std::move(owner), "ag::from_eigen");
  }
}

// A tensor viewing a row-major Eigen::Tensor, TensorMap or TensorFixedSize without a copy; an
// rvalue Eigen::Tensor is moved into an owner.
template <class M>
  requires eigen_detail::TensorWithData<std::remove_cvref_t<M>>
Tensor from_eigen(M&& t) {
  using D = std::remove_cvref_t<M>;
  using Scalar = std::remove_const_t<typename D::Scalar>;
  const Shape shape = eigen_detail::tensor_shape(t);
  if constexpr (!std::is_lvalue_reference_v<M> && eigen_detail::is_eigen_tensor<D>) {
    auto owner = std::make_shared<D>(std::move(t));
    const Scalar* data = owner->data();
    return detail::make_external(data, element_dtype_of<Scalar>(), shape, std::move(owner), "ag::from_eigen");
  } else {
    return detail::make_external(t.data(), element_dtype_of<Scalar>(), shape, nullptr, nullptr, "ag::from_eigen");
  }
}

// A new tensor holding any dense Eigen expression's values, in any layout: shape [rows, cols],
// or [size] for a vector. One copy (the expression is evaluated straight into the tensor).
template <eigen_detail::DenseExpr D>
Tensor from_eigen_copy(const D& m) {
  using Scalar = typename D::Scalar;
  static_assert(eigen_detail::is_agc_scalar<Scalar>,
                "ag::from_eigen_copy: the scalar type has no agc dtype (agc has bool, int32_t, int64_t, float, double)");
  Tensor t = detail::make_tensor(element_dtype_of<Scalar>(), eigen_detail::shape_of(m));
  auto* p = static_cast<Scalar*>(detail::impl_of(t)->data);
  if constexpr (D::RowsAtCompileTime == 1)
    Eigen::Map<Eigen::Matrix<Scalar, 1, Eigen::Dynamic>>(p, m.size()) = m;
  else if constexpr (D::ColsAtCompileTime == 1)
    Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, 1>>(p, m.size()) = m;
  else
    Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(p, m.rows(), m.cols()) = m;
  return t;
}

// Read-only views of a concrete tensor's buffer (not owning: the tensor must outlive them).
// T must be the tensor's element type exactly (TypeError) and Rank its rank (ValueError).
template <class T, int Rank>
Eigen::TensorMap<const Eigen::Tensor<T, Rank, Eigen::RowMajor>> as_eigen(const Tensor& t) {
  const T* data = eigen_detail::checked_data<T>(t, Rank, "ag::as_eigen");
  std::array<Eigen::Index, Rank> dims{};
  for (int i = 0; i < Rank; ++i) dims[i] = static_cast<Eigen::Index>(t.shape()[i]);
  return Eigen::TensorMap<const Eigen::Tensor<T, Rank, Eigen::RowMajor>>(data, dims);
}

// A rank-2 tensor as a row-major matrix of the same shape.
template <class T>
Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> as_eigen_matrix(const Tensor& t) {
  const T* data = eigen_detail::checked_data<T>(t, 2, "ag::as_eigen_matrix");
  return {data, static_cast<Eigen::Index>(t.shape()[0]), static_cast<Eigen::Index>(t.shape()[1])};
}

// A rank-1 tensor as a column vector.
template <class T>
Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>> as_eigen_vector(const Tensor& t) {
  const T* data = eigen_detail::checked_data<T>(t, 1, "ag::as_eigen_vector");
  return {data, static_cast<Eigen::Index>(t.shape()[0])};
}

}  // namespace ag
