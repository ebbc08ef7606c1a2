// Tensor operations: operators and functions. Each works eagerly on concrete tensors and is
// recorded into the graph when an input is symbolic (while tracing).
#pragma once

#include <initializer_list>
#include <source_location>
#include <string_view>
#include <vector>

#include "ag/tensor.h"

namespace ag {

class Variable;
using Loc = std::source_location;

namespace detail {
// A C++ scalar operand. It is "weak" (docs/eager.md, "Dtype rules"): in an op with a tensor
// it takes the tensor's dtype.
struct WeakScalar {
  enum Kind : uint8_t { Bool, Int, Float } kind = Int;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  DType natural_dtype;  // the dtype the C++ type has on its own
  template <Arithmetic T>
  static WeakScalar of(T v) {
    WeakScalar w;
    w.natural_dtype = dtype_of<T>();
    if constexpr (std::is_same_v<T, bool>) w.kind = Bool, w.b = v;
    else if constexpr (std::is_floating_point_v<T>) w.kind = Float, w.f = static_cast<double>(v);
    else w.kind = Int, w.i = static_cast<int64_t>(v);
    return w;
  }
};
}  // namespace detail

// An operand of a binary op: a tensor, a Variable (read), or a weak C++ scalar. Converting to
// it records where the op was written (the default argument is evaluated at the call site).
class Operand {
 public:
  Operand(const Tensor& t, Loc loc = Loc::current()) : tensor_(&t), loc_(loc) {}  // NOLINT
  Operand(const Variable& v, Loc loc = Loc::current());                            // NOLINT
  template <Arithmetic T>
  Operand(T v, Loc loc = Loc::current()) : scalar_(detail::WeakScalar::of(v)), loc_(loc) {}  // NOLINT
  Operand(const detail::WeakScalar& w, SourceLoc loc) : scalar_(w), loc_(loc) {}
  Operand(const Tensor& t, SourceLoc loc) : tensor_(&t), loc_(loc) {}

  bool is_tensor() const { return tensor_ != nullptr || owns_; }
  const Tensor& tensor() const { return owns_ ? owned_ : *tensor_; }
  const detail::WeakScalar& scalar() const { return scalar_; }
  SourceLoc loc() const { return loc_; }

 private:
  const Tensor* tensor_ = nullptr;
  Tensor owned_;  // a Variable's value
  bool owns_ = false;
  detail::WeakScalar scalar_;
  SourceLoc loc_;
};

// The left operand of `scalar op tensor`: never a tensor, so `tensor op tensor` is unambiguous.
class ScalarOperand {
 public:
  template <Arithmetic T>
  ScalarOperand(T v, Loc loc = Loc::current()) : scalar_(detail::WeakScalar::of(v)), loc_(loc) {}  // NOLINT
  Operand operand() const;
  const detail::WeakScalar& scalar() const { return scalar_; }
  SourceLoc loc() const { return loc_; }

 private:
  detail::WeakScalar scalar_;
  SourceLoc loc_;
};

// Axes of a reduction: all axes by default, one axis, or a list. Negative axes count from the end.
struct Axes {
  Axes() = default;
  Axes(int64_t axis) : all(false) { dims.push_back(axis); }  // NOLINT
  Axes(int axis) : Axes(static_cast<int64_t>(axis)) {}          // NOLINT
  Axes(std::initializer_list<int64_t> list) : dims(list), all(false) {}
  Axes(const std::vector<int64_t>& list) : dims(list), all(false) {}  // NOLINT
  Shape dims;
  bool all = true;
};

// ---- Arithmetic, comparison and bitwise operators (NumPy broadcasting) ----
#define AG_DECLARE_BINARY_OPERATOR(op)                  \
  Tensor operator op(const Tensor& a, Operand b);       \
  Tensor operator op(ScalarOperand a, const Tensor& b);
AG_DECLARE_BINARY_OPERATOR(+)
AG_DECLARE_BINARY_OPERATOR(-)
AG_DECLARE_BINARY_OPERATOR(*)
AG_DECLARE_BINARY_OPERATOR(/)
AG_DECLARE_BINARY_OPERATOR(%)
AG_DECLARE_BINARY_OPERATOR(<)
AG_DECLARE_BINARY_OPERATOR(<=)
AG_DECLARE_BINARY_OPERATOR(>)
AG_DECLARE_BINARY_OPERATOR(>=)
AG_DECLARE_BINARY_OPERATOR(==)
AG_DECLARE_BINARY_OPERATOR(!=)
AG_DECLARE_BINARY_OPERATOR(&)
AG_DECLARE_BINARY_OPERATOR(|)
AG_DECLARE_BINARY_OPERATOR(^)
#undef AG_DECLARE_BINARY_OPERATOR

// Unary operators take an Operand so that, like the binary ones, they record the line they are
// written on (operators cannot have a defaulted source_location of their own). Built-in types
// keep the built-in operators: those are exact matches.
Tensor operator-(Operand x);
Tensor operator~(Operand x);  // logical not of a bool tensor

Tensor& operator+=(Tensor& a, Operand b);
Tensor& operator-=(Tensor& a, Operand b);
Tensor& operator*=(Tensor& a, Operand b);
Tensor& operator/=(Tensor& a, Operand b);
Tensor& operator%=(Tensor& a, Operand b);
Tensor& operator&=(Tensor& a, Operand b);
Tensor& operator|=(Tensor& a, Operand b);
Tensor& operator^=(Tensor& a, Operand b);

// ---- Elementwise functions ----
// abs neg exp log sqrt rsqrt square tanh sigmoid softplus relu sign sin cos tan asin acos atan
// sinh cosh asinh acosh atanh erf erfc log1p expm1 floor ceil round (half to even, like
// TensorFlow) logical_not identity stop_gradient: `Tensor fn(const Tensor& x, Loc =
// Loc::current())`, one per `unary(fn)` row of ops.def.
//
// add subtract multiply divide pow atan2 maximum minimum floordiv (floor division, TensorFlow's //)
// floormod (the result has the divisor's sign, TensorFlow's %) logical_and logical_or
// logical_xor less less_equal greater greater_equal equal not_equal: `Tensor fn(Operand a,
// Operand b)`, broadcasting, one per `binary(fn)` row of ops.def.
#define AG_API_custom(fn)
#define AG_API_unary(fn) Tensor fn(const Tensor& x, Loc loc = Loc::current());
#define AG_API_binary(fn) Tensor fn(Operand a, Operand b);
#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Raises, Cost, Vector, Gradient, Api, ApiName, Equivalent) AG_API_##Api(ApiName)
#include "ag/graph/ops.def"
#undef AG_API_custom
#undef AG_API_unary
#undef AG_API_binary

// where(cond, x, y): elementwise select with broadcasting; cond is bool.
Tensor where(const Tensor& cond, Operand x, Operand y);
// min(max(t, lo), hi), elementwise with broadcasting (tf.clip_by_value).
Tensor clip_by_value(const Tensor& t, Operand clip_value_min, Operand clip_value_max);
Tensor cast(const Tensor& x, DType dtype, Loc loc = Loc::current());

// ---- Reductions ----
Tensor reduce_sum(const Tensor& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Tensor reduce_mean(const Tensor& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Tensor reduce_max(const Tensor& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Tensor reduce_min(const Tensor& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Tensor reduce_prod(const Tensor& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Tensor reduce_any(const Tensor& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
Tensor reduce_all(const Tensor& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
// log(sum(exp(x))) over `axes`, computed from max(x) so that it neither overflows nor
// underflows (an all -inf slice gives -inf, as TensorFlow's).
Tensor reduce_logsumexp(const Tensor& x, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
// Running sum / product along `axis` (tf.math.cumsum): exclusive leaves each element out of its
// own value (the first is 0 / 1), reverse runs from the end.
Tensor cumsum(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false, Loc loc = Loc::current());
Tensor cumprod(const Tensor& x, int64_t axis = 0, bool exclusive = false, bool reverse = false, Loc loc = Loc::current());
Tensor argmax(const Tensor& x, int64_t axis = 0, Loc loc = Loc::current());  // int64 result
Tensor argmin(const Tensor& x, int64_t axis = 0, Loc loc = Loc::current());

// ---- Linear algebra and layout ----
// 2-D, or batched over leading dims (broadcast).
Tensor matmul(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
// tf.linalg.matmul's transpose_a / transpose_b: a^T and b^T (their last two dims swapped) without
// making the transposes: GEMM reads the operands as they lie.
Tensor matmul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b = false, Loc loc = Loc::current());
// perm empty: reverse the dims.
Tensor transpose(const Tensor& x, std::vector<int64_t> perm = {}, Loc loc = Loc::current());
// One dim of `shape` may be -1 (inferred).
Tensor reshape(const Tensor& x, Shape shape, Loc loc = Loc::current());
Tensor concat(const std::vector<Tensor>& xs, int64_t axis, Loc loc = Loc::current());
Tensor stack(const std::vector<Tensor>& xs, int64_t axis = 0, Loc loc = Loc::current());
// size -1: to the end of that dim.
Tensor slice(const Tensor& x, std::vector<int64_t> begin, std::vector<int64_t> size, Loc loc = Loc::current());
// Elements of `params` along `axis` at `indices` (int32/int64); result shape:
// params.shape[:axis] + indices.shape + params.shape[axis+1:]. Out of range: InvalidArgumentError.
Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis = 0, Loc loc = Loc::current());
Tensor expand_dims(const Tensor& x, int64_t axis, Loc loc = Loc::current());
// axes empty: remove every dim of size 1.
Tensor squeeze(const Tensor& x, std::vector<int64_t> axes = {}, Loc loc = Loc::current());
// The dynamic shape, as an int64 vector.
Tensor shape_of(const Tensor& x, Loc loc = Loc::current());
// `x`, whose shape must fit `shape` (-1: any size), with the static shape refined to it
// (tf.ensure_shape): gives a rank to a value of unknown rank while tracing. A shape that cannot
// fit is a ValueError while tracing; one that does not fit at run time an InvalidArgumentError.
Tensor ensure_shape(const Tensor& x, Shape shape, Loc loc = Loc::current());
// `x` broadcast to `shape` (NumPy's rules: x's dims, aligned right, are 1 or equal to shape's);
// a ValueError while tracing when they cannot be.
Tensor broadcast_to(const Tensor& x, Shape shape, Loc loc = Loc::current());
// The slices of params that the last dim of `indices` addresses (tf.gather_nd): indices
// [..., k] (int32/int64, k <= params' rank, params' first k dims known while tracing) gives
// indices.shape[:-1] + params.shape[k:]. An index out of range is an InvalidArgumentError.
Tensor gather_nd(const Tensor& params, const Tensor& indices, Loc loc = Loc::current());
// x padded by paddings[d] = {before, after} elements in each dim d (tf.pad): with
// constant_value, or mirrored without the edge (reflect: [1 2 3] -> 3 2 [1 2 3] 2 1) or with it
// (symmetric: 2 1 [1 2 3] 3 2). The dims of x must be known while tracing.
enum class PadMode { constant, reflect, symmetric };
Tensor pad(const Tensor& x, const std::vector<std::pair<int64_t, int64_t>>& paddings, PadMode mode = PadMode::constant,
           double constant_value = 0, Loc loc = Loc::current());
// x repeated multiples[d] times along each dim d (tf.tile).
Tensor tile(const Tensor& x, const std::vector<int64_t>& multiples, Loc loc = Loc::current());
// x's elements shifted by `shift` places along `axis`, those pushed past the end coming back at
// the start (tf.roll, np.roll): result[i] = x[(i - shift) mod n]; a negative shift rolls the
// other way. The dim must be known while tracing. Several axes: each shift along its own axis.
// An elementwise op reading rolls runs in compiled code without copying them (docs/jit.md,
// "Concatenations").
Tensor roll(const Tensor& x, int64_t shift, int64_t axis, Loc loc = Loc::current());
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& axes, Loc loc = Loc::current());
// Coordinate grids of vectors (tf.meshgrid): with xy indexing the first two dims are swapped
// (NumPy's default), with ij each grid has the vectors' sizes in order.
enum class MeshIndexing { xy, ij };
std::vector<Tensor> meshgrid(const std::vector<Tensor>& xs, MeshIndexing indexing = MeshIndexing::xy,
                             Loc loc = Loc::current());
// ---- Sorting, scattering and segments (TensorFlow's names) ----
enum class SortDirection { ascending, descending };
// `values` sorted along `axis` (tf.sort): ascending puts NaN after every number, descending
// before; equal values keep their order. Differentiable (the gradient follows the order).
Tensor sort(const Tensor& values, int64_t axis = -1, SortDirection direction = SortDirection::ascending,
            Loc loc = Loc::current());
// The indices that sort `values` along `axis` (tf.argsort, stable): int32.
Tensor argsort(const Tensor& values, int64_t axis = -1, SortDirection direction = SortDirection::ascending,
               Loc loc = Loc::current());
// The k largest entries of the last dim, largest first, and their int32 indices (tf.math.top_k;
// among equal entries the lower index first): auto [values, indices] = ag::top_k(x, 5).
struct TopK {
  Tensor values, indices;
};
TopK top_k(const Tensor& input, int64_t k = 1, Loc loc = Loc::current());
// x's elements at `indices` along `axis` (NumPy's take_along_axis): indices has x's rank and
// x's dims but along axis; the result has indices' shape. Out of range: InvalidArgumentError.
Tensor take_along_axis(const Tensor& x, const Tensor& indices, int64_t axis, Loc loc = Loc::current());
// `tensor` with the slices that the last dim of `indices` addresses replaced by (added to)
// `updates` [indices.shape[:-1] + tensor.shape[k:]] (tf.tensor_scatter_nd_update / _add; an index
// given twice: the last update wins / both add). Out of range: InvalidArgumentError.
Tensor tensor_scatter_nd_update(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                                Loc loc = Loc::current());
Tensor tensor_scatter_nd_add(const Tensor& tensor, const Tensor& indices, const Tensor& updates,
                             Loc loc = Loc::current());
// The sum (maximum) of data's slices per segment (tf.math.unsorted_segment_sum / _max):
// segment_ids (int32/int64) is a prefix of data's shape; the result is [num_segments] +
// data.shape[ids' rank:]. A negative id drops its slice; an id >= num_segments is an
// InvalidArgumentError; an empty segment sums to 0, its maximum is the dtype's lowest value.
Tensor unsorted_segment_sum(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            Loc loc = Loc::current());
Tensor unsorted_segment_max(const Tensor& data, const Tensor& segment_ids, int64_t num_segments,
                            Loc loc = Loc::current());
// Einstein summation (tf.einsum, NumPy's rules): ag::einsum("bqd,bkd->bqk", {q, k}). Labels are
// letters; "..." stands for broadcast dims; without "->" the output is the ellipsis' dims, then
// the labels seen once, sorted; a label repeated within one operand takes its diagonal ("ii->i",
// "ii" the trace). Computed as gathers (diagonals), transposes, reshapes and batched matmuls.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands, Loc loc = Loc::current());

// The vector norm over `axes` (all by default): ord 2 (euclidean), 1, or INFINITY (the largest
// magnitude), tf.norm's.
Tensor norm(const Tensor& x, double ord = 2, Axes axes = {}, bool keepdims = false, Loc loc = Loc::current());
// One-hot rows of `depth` along a new last dim: on_value where indices[...] == k, else off_value
// (an index outside [0, depth) gives a row of off_value, as in TensorFlow).
Tensor one_hot(const Tensor& indices, int64_t depth, double on_value = 1, double off_value = 0,
               DType dtype = DType::Float32, Loc loc = Loc::current());
// `num` evenly spaced values from start to stop, both included (tf.linspace): float32 unless a
// float64 start or stop is given as a tensor.
Tensor linspace(const Tensor& start, const Tensor& stop, int64_t num, Loc loc = Loc::current());
Tensor linspace(double start, double stop, int64_t num, DType dtype = DType::Float32, Loc loc = Loc::current());

}  // namespace ag
