// check_numerics: the eager kernel of the CheckNumerics op, the check enable_check_numerics()
// adds to every eager op, and the error message that compiled code raises too.
#include "ag/detail/check_numerics.h"

#include <cmath>
#include <fmt/format.h>

#include "ag/debugging.h"
#include "ag/detail/call_hooks.h"
#include "kernels.h"

namespace ag::detail {

bool checks_numerics_of(OpKind op, DType dtype) {
  if (dtype != DType::Float32 && dtype != DType::Float64) return false;
  if (op == OpKind::Cast) return true;  // float64 -> float32 overflows to inf
  return !runs_on_storage_dtypes(op) && op != OpKind::CheckNumerics;
}

Attrs check_numerics_attrs(std::string message, std::string producer) {
  Attrs a;
  a.strings = {std::move(message), std::move(producer)};
  return a;
}

NonFiniteKind non_finite_kind(double v) {
  return std::isnan(v) ? NonFiniteKind::NaN : v > 0 ? NonFiniteKind::PositiveInf : NonFiniteKind::NegativeInf;
}

void throw_non_finite(const Attrs& attrs, const TensorType& type, int64_t index, NonFiniteKind kind, SourceLoc loc) {
  const char* value = kind == NonFiniteKind::NaN ? "NaN" : kind == NonFiniteKind::PositiveInf ? "inf" : "-inf";
  std::string where;
  if (index >= 0 && (type.rank_unknown || type.shape.rank() > 0))  // a scalar has one element
    where = type.shape.is_fully_defined() && !type.rank_unknown
                ? fmt::format(" at element {}", element_index_str(type.shape, index))
                : fmt::format(" at element {} (row-major)", index);
  const std::string result = fmt::format("{}{}", dtype_name(type.dtype), type.rank_unknown ? "[*]" : type.shape.str());
  const std::string& message = attrs.strings.size() > 0 ? attrs.strings[0] : std::string();
  const std::string& producer = attrs.strings.size() > 1 ? attrs.strings[1] : std::string();
  if (!producer.empty())
    throw InvalidArgumentError(fmt::format("check_numerics: {} produced {}{} of its {} result{}", producer, value,
                                           where, result, at(loc)));
  throw InvalidArgumentError(fmt::format("check_numerics: {}{}the tensor has {}{} ({}){}", message,
                                         message.empty() ? "" : ": ", value, where, result, at(loc)));
}

namespace {

// The first non-finite element of `n`, or -1. Blocks are tested without a branch per element
// (x - x is 0 exactly when x is finite), so the common all-finite case runs as vector code.
template <class T>
int64_t first_non_finite(const T* p, int64_t n) {
  constexpr int64_t kBlock = 256;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t e = std::min(n, b + kBlock);
    bool bad = false;
    for (int64_t i = b; i < e; ++i) bad |= !(p[i] - p[i] == T(0));
    if (!bad) continue;
    for (int64_t i = b; i < e; ++i)
      if (!std::isfinite(p[i])) return i;
  }
  return -1;
}

// Raises when `t` holds a NaN or Inf; what the error names comes from `attrs` (see the header).
void check_tensor(const Tensor& t, const Attrs& attrs, SourceLoc loc) {
  const TensorImpl* impl = impl_of(t);
  const int64_t n = t.num_elements();
  int64_t i = -1;
  double v = 0;
  if (t.dtype() == DType::Float32) {
    const float* p = static_cast<const float*>(impl->data);
    if ((i = first_non_finite(p, n)) >= 0) v = p[i];
  } else if (t.dtype() == DType::Float64) {
    const double* p = static_cast<const double*>(impl->data);
    if ((i = first_non_finite(p, n)) >= 0) v = p[i];
  }
  if (i >= 0) throw_non_finite(attrs, type_of(t), i, non_finite_kind(v), loc);
}

}  // namespace

void check_result_numerics(OpKind op, const Tensor& result, SourceLoc loc) {
  if (!checks_numerics_of(op, result.dtype())) return;
  check_tensor(result, check_numerics_attrs({}, user_op_name(op)), loc);
}

Tensor check_numerics_kernel(std::span<const Tensor> in, const Attrs& attrs, SourceLoc loc) {
  check_tensor(in[0], attrs, loc);
  return in[0];
}

}  // namespace ag::detail

namespace ag::debugging {

void enable_check_numerics() { detail::set_call_hook(detail::CallHook::CheckNumerics, true); }
void disable_check_numerics() { detail::set_call_hook(detail::CallHook::CheckNumerics, false); }
bool check_numerics_enabled() { return detail::check_numerics_enabled(); }

Tensor check_numerics(const Tensor& t, std::string message, Loc loc) {
  return detail::apply_op(OpKind::CheckNumerics, {t}, detail::check_numerics_attrs(std::move(message), {}), loc);
}

}  // namespace ag::debugging
