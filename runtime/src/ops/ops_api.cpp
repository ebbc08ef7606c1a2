// The public op functions and operators: operand resolution (weak C++ scalars take the tensor's
// dtype), attribute normalization, then apply_op.
#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <utility>

#include "ag/construct.h"
#include "ag/ops.h"
#include "ag/variable.h"
#include "kernels.h"

namespace ag {
namespace detail {
namespace {

std::string scalar_text(const WeakScalar& w) {
  switch (w.kind) {
    case WeakScalar::Bool: return w.b ? "true" : "false";
    case WeakScalar::Int: return std::to_string(w.i);
    case WeakScalar::Float: return fmt::format("{}", w.f);
  }
  return "?";
}

}  // namespace

// The weak scalar `w` as a tensor of the dtype of the tensor it is combined with.
Tensor weak_scalar_as(const WeakScalar& w, DType target, OpKind op, SourceLoc loc) {
  auto mismatch = [&](const char* what, const char* fix) -> Tensor {
    throw TypeError(fmt::format("{}: cannot combine a {} tensor with the C++ {} {}{}; {}", user_op_name(op),
                                dtype_name(target), what, scalar_text(w), at(loc), fix));
  };
  switch (target) {
    case DType::Bool:
      if (w.kind != WeakScalar::Bool) return mismatch("number", "compare the tensor first or use ag::cast");
      return Tensor::make_scalar(DType::Bool, w.b, w.b);
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8:
    case DType::Int8: {
      if (w.kind == WeakScalar::Float)
        return mismatch("floating-point value", "use ag::cast(x, ag::float32) or an integer constant");
      if (w.kind == WeakScalar::Bool) return mismatch("bool", "use an integer constant");
      const auto [lo, hi] = target == DType::Int32  ? std::pair<int64_t, int64_t>{INT32_MIN, INT32_MAX}
                            : target == DType::UInt8 ? std::pair<int64_t, int64_t>{0, 255}
                            : target == DType::Int8  ? std::pair<int64_t, int64_t>{-128, 127}
                                                     : std::pair<int64_t, int64_t>{INT64_MIN, INT64_MAX};
      if (w.i < lo || w.i > hi)
        throw ValueError(fmt::format("{}: the C++ scalar {} does not fit the {} tensor it is combined with{}",
                                     user_op_name(op), w.i, dtype_name(target), at(loc)));
      return Tensor::make_scalar(target, static_cast<double>(w.i), w.i);
    }
    case DType::Float32:
    case DType::Float64:
    case DType::Float16:
    case DType::BFloat16:
      if (w.kind == WeakScalar::Bool) return mismatch("bool", "use a number");
      return Tensor::make_scalar(target, w.kind == WeakScalar::Float ? w.f : static_cast<double>(w.i), w.i);
    case DType::List: break;
  }
  throw TypeError(fmt::format("{}: a TensorArray is not an operand{}", user_op_name(op), at(loc)));
}

namespace {

// The dtype two weak scalars combine to on their own (C++'s usual arithmetic conversions).
DType common_natural(const WeakScalar* const* ws, size_t n) {
  DType d = DType::Bool;
  auto rank = [](DType t) {
    switch (t) {
      case DType::Bool: return 0;
      case DType::Int32: return 1;
      case DType::Int64: return 2;
      case DType::Float32: return 3;
      default: return 4;
    }
  };
  for (size_t i = 0; i < n; ++i)
    if (rank(ws[i]->natural_dtype) > rank(d)) d = ws[i]->natural_dtype;
  return d;
}

// Resolves operands to tensors of one dtype when scalars are involved.
void resolve(std::span<const Operand* const> ops, Tensor* out, OpKind op, SourceLoc loc) {
  const Tensor* strong = nullptr;
  for (const Operand* o : ops)
    if (o->is_tensor()) {
      check_readable(o->tensor(), op, loc);
      if (!strong) strong = &o->tensor();
    }
  DType target;
  if (strong) {
    target = strong->dtype();
  } else {
    const WeakScalar* ws[3];
    for (size_t i = 0; i < ops.size(); ++i) ws[i] = &ops[i]->scalar();
    target = common_natural(ws, ops.size());
  }
  for (size_t i = 0; i < ops.size(); ++i)
    out[i] = ops[i]->is_tensor() ? ops[i]->tensor() : weak_scalar_as(ops[i]->scalar(), target, op, loc);
}

SourceLoc loc_of(const Operand& a, const Operand& b) { return a.loc().known() ? a.loc() : b.loc(); }

// Two tensors laid out contiguously (what apply_op takes) without taking references: the
// caller's tensors outlive the op, and these handles are never destroyed, so they never
// release. Saves four atomic refcount updates per binary op on the eager hot path.
class BorrowedPair {
 public:
  BorrowedPair(const Tensor& a, const Tensor& b) {
    new (buf_) Tensor(detail::adopt(detail::impl_of(a)));
    new (buf_ + sizeof(Tensor)) Tensor(detail::adopt(detail::impl_of(b)));
  }
  std::span<const Tensor> span() const { return {std::launder(reinterpret_cast<const Tensor*>(buf_)), 2}; }

 private:
  alignas(Tensor) unsigned char buf_[2 * sizeof(Tensor)];
};

Tensor binary(OpKind op, const Operand& a, const Operand& b) {
  const SourceLoc loc = loc_of(a, b);
  if (a.is_tensor() && b.is_tensor()) return apply_op(op, BorrowedPair(a.tensor(), b.tensor()).span(), Attrs::none(), loc);
  if (a.is_tensor() || b.is_tensor()) {  // tensor op scalar: the scalar takes the tensor's dtype
    const Tensor& t = a.is_tensor() ? a.tensor() : b.tensor();
    check_readable(t, op, loc);
    const Tensor s = weak_scalar_as((a.is_tensor() ? b : a).scalar(), t.dtype(), op, loc);
    return apply_op(op, (a.is_tensor() ? BorrowedPair(t, s) : BorrowedPair(s, t)).span(), Attrs::none(), loc);
  }
  const Operand* ops[2] = {&a, &b};  // two C++ scalars (ag::add(1, 2.5)): C++ promotion
  Tensor in[2];
  resolve(ops, in, op, loc);
  return apply_op(op, std::span<const Tensor>(in, 2), Attrs::none(), loc);
}

Tensor unary(OpKind op, const Tensor& x, SourceLoc loc) {
  return apply_op(op, std::span<const Tensor>(&x, 1), Attrs::none(), loc);
}

Tensor reduce(OpKind op, const Tensor& x, const Axes& axes, bool keepdims, SourceLoc loc) {
  check_readable(x, op, loc);
  // A reduction of every element needs no rank: the elements as a vector, reduced along 0.
  if (x.has_unknown_rank() && axes.all && !keepdims) {
    Attrs flat;
    flat.shape = Shape{-1};
    return reduce(op, apply_op(OpKind::Reshape, {x}, flat, loc), Axes(0), false, loc);
  }
  Attrs a;
  a.keepdims = keepdims;
  const int64_t rank = known_rank(x, op, loc);
  if (axes.all) {
    for (int64_t i = 0; i < rank; ++i) a.axes().push_back(i);
  } else {
    std::vector<int64_t> v;
    for (int64_t ax : axes.dims) v.push_back(normalize_axis(ax, rank, op, loc));
    std::sort(v.begin(), v.end());
    if (std::adjacent_find(v.begin(), v.end()) != v.end())
      throw ValueError(fmt::format("{}: axis {} is listed twice{}", user_op_name(op), axes.dims.str(), at(loc)));
    a.axes() = Shape(v);
  }
  return apply_op(op, {x}, a, loc);
}

Tensor arg_reduce(OpKind op, const Tensor& x, int64_t axis, SourceLoc loc) {
  check_readable(x, op, loc);
  Attrs a;
  const int64_t rank = known_rank(x, op, loc);
  a.axis = rank == 0 ? axis : normalize_axis(axis, rank, op, loc);
  return apply_op(op, {x}, a, loc);
}

}  // namespace
}  // namespace detail

using detail::binary;
using detail::unary;

Operand::Operand(const Variable& v, Loc loc) : owned_(v.value()), owns_(true), loc_(loc) {}

Operand ScalarOperand::operand() const { return Operand(scalar_, loc_); }

#define AG_DEFINE_BINARY_OPERATOR(sym, kind)                                                                 \
  Tensor operator sym(const Tensor& a, Operand b) { return binary(OpKind::kind, Operand(a, b.loc()), b); } \
  Tensor operator sym(ScalarOperand a, const Tensor& b) { return binary(OpKind::kind, a.operand(), Operand(b, a.loc())); }
AG_DEFINE_BINARY_OPERATOR(+, Add)
AG_DEFINE_BINARY_OPERATOR(-, Sub)
AG_DEFINE_BINARY_OPERATOR(*, Mul)
AG_DEFINE_BINARY_OPERATOR(/, Div)
AG_DEFINE_BINARY_OPERATOR(%, Mod)
AG_DEFINE_BINARY_OPERATOR(<, Less)
AG_DEFINE_BINARY_OPERATOR(<=, LessEqual)
AG_DEFINE_BINARY_OPERATOR(>, Greater)
AG_DEFINE_BINARY_OPERATOR(>=, GreaterEqual)
AG_DEFINE_BINARY_OPERATOR(==, Equal)
AG_DEFINE_BINARY_OPERATOR(!=, NotEqual)
AG_DEFINE_BINARY_OPERATOR(&, LogicalAnd)
AG_DEFINE_BINARY_OPERATOR(|, LogicalOr)
AG_DEFINE_BINARY_OPERATOR(^, LogicalXor)
#undef AG_DEFINE_BINARY_OPERATOR

// Built-in scalars never get here: the built-in operators are exact matches for them.
static const Tensor& unary_operand(const Operand& x, const char* op) {
  if (!x.is_tensor()) throw TypeError(fmt::format("unary {} on an ag::Operand that holds a C++ scalar: negate the scalar itself", op));
  return x.tensor();
}
Tensor operator-(Operand x) { return unary(OpKind::Neg, unary_operand(x, "-"), x.loc()); }
Tensor operator~(Operand x) { return unary(OpKind::LogicalNot, unary_operand(x, "~"), x.loc()); }

#define AG_DEFINE_COMPOUND(sym, kind)                                \
  Tensor& operator sym##=(Tensor& a, Operand b) {                    \
    a = binary(OpKind::kind, Operand(a, b.loc()), b);                \
    return a;                                                        \
  }
AG_DEFINE_COMPOUND(+, Add)
AG_DEFINE_COMPOUND(-, Sub)
AG_DEFINE_COMPOUND(*, Mul)
AG_DEFINE_COMPOUND(/, Div)
AG_DEFINE_COMPOUND(%, Mod)
AG_DEFINE_COMPOUND(&, LogicalAnd)
AG_DEFINE_COMPOUND(|, LogicalOr)
AG_DEFINE_COMPOUND(^, LogicalXor)
#undef AG_DEFINE_COMPOUND

// The unary(fn) and binary(fn) rows of ops.def.
#define AG_DEFINE_custom(kind, fn)
#define AG_DEFINE_unary(kind, fn) \
  Tensor fn(const Tensor& x, Loc loc) { return unary(OpKind::kind, x, loc); }
#define AG_DEFINE_binary(kind, fn) \
  Tensor fn(Operand a, Operand b) { return binary(OpKind::kind, a, b); }
#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Raises, Cost, Vector, Gradient, Api, ApiName, Equivalent) \
  AG_DEFINE_##Api(Name, ApiName)
#include "ag/graph/ops.def"
#undef AG_DEFINE_custom
#undef AG_DEFINE_unary
#undef AG_DEFINE_binary

Tensor where(const Tensor& cond, Operand x, Operand y) {
  const SourceLoc loc = detail::loc_of(x, y);
  const Operand* ops[2] = {&x, &y};
  Tensor in[3];
  in[0] = cond;
  detail::resolve(ops, in + 1, OpKind::Select, loc);
  return detail::apply_op(OpKind::Select, std::span<const Tensor>(in, 3), Attrs::none(), loc);
}

Tensor cast(const Tensor& x, DType dtype, Loc loc) {
  detail::check_readable(x, OpKind::Cast, loc);
  if (x.dtype() == dtype) return x;
  if (dtype == DType::List) throw TypeError("ag::cast: cannot cast to a TensorArray");
  Attrs a;
  a.dtype = dtype;
  return detail::apply_op(OpKind::Cast, {x}, a, loc);
}

#define AG_DEFINE_REDUCE(fn, kind) \
  Tensor fn(const Tensor& x, Axes axes, bool keepdims, Loc loc) { return detail::reduce(OpKind::kind, x, axes, keepdims, loc); }
AG_DEFINE_REDUCE(reduce_sum, ReduceSum)
AG_DEFINE_REDUCE(reduce_mean, ReduceMean)
AG_DEFINE_REDUCE(reduce_max, ReduceMax)
AG_DEFINE_REDUCE(reduce_min, ReduceMin)
AG_DEFINE_REDUCE(reduce_prod, ReduceProd)
AG_DEFINE_REDUCE(reduce_any, ReduceAny)
AG_DEFINE_REDUCE(reduce_all, ReduceAll)
#undef AG_DEFINE_REDUCE

Tensor argmax(const Tensor& x, int64_t axis, Loc loc) { return detail::arg_reduce(OpKind::ArgMax, x, axis, loc); }
Tensor argmin(const Tensor& x, int64_t axis, Loc loc) { return detail::arg_reduce(OpKind::ArgMin, x, axis, loc); }

Tensor matmul(const Tensor& a, const Tensor& b, Loc loc) {
  return detail::apply_op(OpKind::MatMul, {a, b}, Attrs::none(), loc);
}

Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b, Loc loc) {
  Attrs attrs;
  attrs.set_transposes(transpose_a, transpose_b);
  return detail::apply_op(OpKind::MatMul, {a, b}, attrs, loc);
}

Tensor transpose(const Tensor& x, std::vector<int64_t> perm, Loc loc) {
  detail::check_readable(x, OpKind::Transpose, loc);
  Attrs a;
  const int64_t rank = detail::known_rank(x, OpKind::Transpose, loc);
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i) a.perm().push_back(i);
  else
    for (int64_t p : perm) a.perm().push_back(p < 0 ? p + rank : p);
  return detail::apply_op(OpKind::Transpose, {x}, a, loc);
}

Tensor reshape(const Tensor& x, Shape shape, Loc loc) {
  Attrs a;
  a.shape = shape;
  return detail::apply_op(OpKind::Reshape, {x}, a, loc);
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis, Loc loc) {
  Attrs a;
  a.axis = axis;
  if (!xs.empty() && xs[0].has_value() && axis < 0) a.axis = axis + detail::known_rank(xs[0], OpKind::Concat, loc);
  if (xs.size() == 1) {  // nothing to copy, but the same checks as for many
    detail::check_readable(xs[0], OpKind::Concat, loc);
    const TensorType t = detail::type_of(xs[0]);
    detail::infer_type(OpKind::Concat, {&t, 1}, a, loc);
    return xs[0];
  }
  return detail::apply_op(OpKind::Concat, xs, a, loc);
}

// stack = expand_dims + concat, with its own checks so that errors name ag::stack and the
// shapes the user passed (not the expanded ones).
Tensor stack(const std::vector<Tensor>& xs, int64_t axis, Loc loc) {
  if (xs.empty()) throw ValueError("ag::stack: needs at least one tensor" + detail::at(loc));
  for (const Tensor& x : xs) {
    if (!x.has_value()) detail::throw_undefined(x, "ag::stack", loc);
    detail::check_readable(x, OpKind::Concat, loc);
  }
  const Tensor& first = xs[0];
  for (const Tensor& x : xs) detail::known_rank(x, OpKind::Concat, loc);
  const int64_t rank = first.rank();
  const int64_t ax = axis < 0 ? axis + rank + 1 : axis;
  if (ax < 0 || ax > rank)
    throw ValueError(fmt::format("ag::stack: axis {} is out of range for stacking tensors of rank {} (valid: {} to {}){}",
                                 axis, rank, -rank - 1, rank, detail::at(loc)));
  std::vector<Tensor> expanded;
  expanded.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i].dtype() != first.dtype())
      throw TypeError(fmt::format("ag::stack: tensor {} is {}{} but tensor 0 is {}{}; use ag::cast{}", i,
                                  dtype_name(xs[i].dtype()), xs[i].shape().str(), dtype_name(first.dtype()),
                                  first.shape().str(), detail::at(loc)));
    if (!first.shape().is_compatible_with(xs[i].shape()))
      throw ValueError(fmt::format("ag::stack: tensor {} has shape {} but tensor 0 has shape {} (stacked tensors must "
                                   "have the same shape){}",
                                   i, xs[i].shape().str(), first.shape().str(), detail::at(loc)));
    expanded.push_back(expand_dims(xs[i], ax, loc));
  }
  return concat(expanded, ax, loc);
}

Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size, Loc loc) {
  // tf.slice's sizes: -1 is the rest of the dim (the graph's -k for NumPy's stops is indexing's).
  for (size_t d = 0; d < size.size(); ++d)
    if (size[d] < -1)
      throw ValueError(fmt::format("ag::slice: invalid size {} in dim {}: a size is >= 0, or -1 for the rest of the dim{}",
                                   size[d], d, detail::at(loc)));
  Attrs a;
  a.slice_begin() = Shape(begin);
  a.slice_size() = Shape(size);
  return detail::apply_op(OpKind::Slice, {x}, a, loc);
}

namespace {
Tensor scan(OpKind op, const Tensor& x, int64_t axis, bool exclusive, bool reverse, SourceLoc loc) {
  Attrs a;
  a.axis = axis;
  a.scan_flags() = Shape{exclusive ? 1 : 0, reverse ? 1 : 0};
  return detail::apply_op(op, {x}, a, loc);
}
}  // namespace

Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse, Loc loc) {
  return scan(OpKind::Cumsum, x, axis, exclusive, reverse, loc);
}
Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive, bool reverse, Loc loc) {
  return scan(OpKind::Cumprod, x, axis, exclusive, reverse, loc);
}

namespace detail {
Tensor slice_update(const Tensor& x, const Tensor& update, const Shape& begin, SourceLoc loc) {
  Attrs a;
  a.slice_begin() = begin;
  return apply_op(OpKind::SliceUpdate, {x, update}, a, loc);
}
}  // namespace detail

Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis, Loc loc) {
  detail::check_readable(params, OpKind::Gather, loc);
  Attrs a;
  a.axis = axis < 0 ? axis + detail::known_rank(params, OpKind::Gather, loc) : axis;
  return detail::apply_op(OpKind::Gather, {params, indices}, a, loc);
}

Tensor expand_dims(const Tensor& x, int64_t axis, Loc loc) {
  detail::check_readable(x, OpKind::ExpandDims, loc);
  Attrs a;
  a.axis = detail::normalize_axis(axis, detail::known_rank(x, OpKind::ExpandDims, loc) + 1, OpKind::ExpandDims, loc);
  return detail::apply_op(OpKind::ExpandDims, {x}, a, loc);
}

Tensor squeeze(const Tensor& x, std::vector<int64_t> axes, Loc loc) {
  detail::check_readable(x, OpKind::Squeeze, loc);
  Attrs a;
  std::vector<int64_t> v;
  const int64_t rank = detail::known_rank(x, OpKind::Squeeze, loc);
  for (int64_t ax : axes) v.push_back(detail::normalize_axis(ax, rank, OpKind::Squeeze, loc));
  // Without axes: the dims that are 1 now (while tracing: statically 1; an unknown dim stays,
  // as in the static type). The node always carries the exact list, so the eager kernel, the
  // interpreter and the JIT remove the same dims whatever the run-time sizes.
  if (axes.empty())
    for (int64_t i = 0; i < x.rank(); ++i)
      if (x.shape()[i] == 1) v.push_back(i);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  a.axes() = Shape(v);
  return detail::apply_op(OpKind::Squeeze, {x}, a, loc);
}

Tensor shape_of(const Tensor& x, Loc loc) { return detail::apply_op(OpKind::ShapeOf, {x}, Attrs::none(), loc); }

Tensor ensure_shape(const Tensor& x, Shape shape, Loc loc) {
  for (int64_t d : shape)
    if (d < -1) throw ValueError(fmt::format("ag::ensure_shape: invalid dim {} in shape {}{}", d, shape.str(), detail::at(loc)));
  Attrs a;
  a.shape = shape;
  return detail::apply_op(OpKind::EnsureShape, {x}, a, loc);
}

Tensor range(Operand limit) {
  return range(Operand(detail::WeakScalar::of(0), limit.loc()), limit, Operand(detail::WeakScalar::of(1), limit.loc()));
}

Tensor range(Operand start, Operand limit, Operand delta) {
  const SourceLoc loc = detail::loc_of(start, limit);
  const Operand* ops[3] = {&start, &limit, &delta};
  Tensor in[3];
  detail::resolve(ops, in, OpKind::Range, loc);
  Attrs a;
  a.dtype = in[0].dtype();
  return detail::apply_op(OpKind::Range, std::span<const Tensor>(in, 3), a, loc);
}

}  // namespace ag
