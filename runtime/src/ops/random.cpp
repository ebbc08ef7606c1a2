// Random numbers: the counter-based stream, the stateless constructors of construct.h, and the
// stateful RandomUniform/RandomNormal ops behind ag::random::Generator.
//
// Word `c` of the stream of `seed` is a pure function of (seed, c) (its fill loops are SIMD-bound
// kernels: ops/isa/random.cpp). A stateless constructor reads
// words 0..n-1; a Generator keeps {seed, counter} in a Variable and each draw takes the next words
// and advances the counter. So a draw gives the same numbers eagerly, in the graph interpreter
// and in compiled code (which runs this kernel), and concurrent draws never share words.
#include <cmath>
#include <fmt/format.h>

#include "../trace/frame.h"
#include "ag/construct.h"
#include "ag/detail/out_of_memory.h"
#include "ag/detail/variable_state.h"
#include "ag/random.h"
#include "ag/detail/kernel_set.h"
#include "kernels.h"

namespace ag::detail {
namespace {

// The words a draw of `shape` takes from the stream.
uint64_t words_drawn(OpKind op, const Shape& shape) {
  return static_cast<uint64_t>(shape.num_elements()) * (op == OpKind::RandomNormal ? 2 : 1);
}

// The TypeError/ValueError of a draw's parameters (`what` names the op, `where` is " (at f:l)" or
// empty): the same checks for the stateless constructors, eager draws and the graph's type rules.
void check_draw(OpKind op, const Shape& shape, DType dtype, double a, double b, const std::string& what,
                const std::string& where = {}) {
  for (int64_t d : shape)
    if (d < 0) throw ValueError(fmt::format("{}: shape {} has a negative or unknown dim{}", what, shape.str(), where));
  if (op == OpKind::RandomNormal) {
    if (!is_floating(dtype))
      throw TypeError(fmt::format("{}: dtype must be float32 or float64, got {}{}", what, dtype_name(dtype), where));
    return;
  }
  if (!is_numeric(dtype))
    throw TypeError(fmt::format("{}: dtype must be numeric, got {}{}", what, dtype_name(dtype), where));
  if (is_integer(dtype) && !(b > a))
    throw ValueError(fmt::format("{}: need minval < maxval for integers, got [{}, {}){}", what, a, b, where));
}

}  // namespace

std::pair<uint64_t, uint64_t> take_random_words(VariableState& state, OpKind op, const Shape& shape) {
  // Taking the words and advancing the counter is one step, so concurrent draws from one
  // generator get disjoint words. The state's tensor is replaced, never written in place: a
  // reader may hold the old one. (Its allocation comes first: a failure changes nothing.)
  Tensor next = make_tensor(DType::Int64, Shape{2});
  std::lock_guard lock(state.mu);
  const auto* words = static_cast<const int64_t*>(detail::impl_of(state.value)->data);
  const auto seed = static_cast<uint64_t>(words[0]), counter = static_cast<uint64_t>(words[1]);
  auto* out = static_cast<int64_t*>(detail::impl_of(next)->data);
  out[0] = words[0];
  out[1] = static_cast<int64_t>(counter + words_drawn(op, shape));  // wraps after 2^64 words
  state.value = std::move(next);
  return {seed, counter};
}

Tensor random_kernel(OpKind op, const Attrs& attrs) {
  // First: a draw too large to allocate leaves the generator's state as it was.
  Tensor t = make_tensor(attrs.dtype, attrs.shape);
  const auto [seed, counter] = take_random_words(*attrs.variable, op, attrs.shape);
  kernels().random_fill(t.dtype(), detail::impl_of(t)->data, t.num_elements(), op == OpKind::RandomNormal, seed, counter,
                        attrs.scalar, attrs.scalar2);
  return t;
}

TensorType random_type(OpKind op, size_t num_inputs, const Attrs& attrs, SourceLoc loc) {
  const std::string what = user_op_name(op);
  if (num_inputs != 0) throw InternalError(what + ": takes no tensor inputs");
  if (!attrs.variable || attrs.variable->dtype != DType::Int64 || !(attrs.variable->shape == Shape{2}))
    throw InternalError(what + ": the generator state must be an int64[2] variable");
  check_draw(op, attrs.shape, attrs.dtype, attrs.scalar, attrs.scalar2, what, at(loc));
  return {attrs.dtype, attrs.shape};
}

}  // namespace ag::detail

namespace ag {

using detail::make_tensor;

Tensor random_uniform(const Shape& shape, DType dtype, double minval, double maxval, uint64_t seed, Loc loc) {
  detail::check_draw(OpKind::RandomUniform, shape, dtype, minval, maxval, "ag::random_uniform");
  Tensor t = detail::make_tensor_for("ag::random_uniform", dtype, shape, loc);
  detail::kernels().random_fill(t.dtype(), detail::impl_of(t)->data, t.num_elements(), false, seed, 0, minval, maxval);
  return t;
}

Tensor random_normal(const Shape& shape, DType dtype, double mean, double stddev, uint64_t seed, Loc loc) {
  detail::check_draw(OpKind::RandomNormal, shape, dtype, mean, stddev, "ag::random_normal");
  Tensor t = detail::make_tensor_for("ag::random_normal", dtype, shape, loc);
  detail::kernels().random_fill(t.dtype(), detail::impl_of(t)->data, t.num_elements(), true, seed, 0, mean, stddev);
  return t;
}

namespace random {
namespace {

Tensor draw(const Variable& state, OpKind op, const Shape& shape, DType dtype, double a, double b, SourceLoc loc) {
  Attrs attrs;
  attrs.variable = state.state();
  attrs.shape = shape;
  attrs.dtype = dtype;
  attrs.scalar = a;
  attrs.scalar2 = b;
  // While tracing, the draw is a stateful node: it runs, and advances the state, on every call.
  if (detail::is_tracing()) return detail::trace_op(op, {}, attrs, loc);
  detail::infer_type(op, {}, attrs, loc);
  try {
    return detail::random_kernel(op, attrs);
  } catch (const detail::TensorAllocationFailure& f) {
    throw detail::out_of_memory(detail::user_op_name(op), f.dtype, f.shape, loc);
  }
}

Tensor state_tensor(uint64_t seed) {
  Tensor t = make_tensor(DType::Int64, Shape{2});
  auto* words = static_cast<int64_t*>(detail::impl_of(t)->data);
  words[0] = static_cast<int64_t>(seed);
  words[1] = 0;
  return t;
}

}  // namespace

Generator::Generator(uint64_t seed, std::string name)
    : state_(state_tensor(seed), name.empty() ? std::string("generator") : std::move(name)) {}

Tensor Generator::uniform(const Shape& shape, DType dtype, double minval, double maxval, Loc loc) {
  return draw(state_, OpKind::RandomUniform, shape, dtype, minval, maxval, loc);
}

Tensor Generator::normal(const Shape& shape, DType dtype, double mean, double stddev, Loc loc) {
  return draw(state_, OpKind::RandomNormal, shape, dtype, mean, stddev, loc);
}

void Generator::reset_from_seed(uint64_t seed) { state_.assign(state_tensor(seed)); }

Generator& global_generator() {
  // Created outside any trace (as tf.init_scope would): its first use may be in a later trace
  // of some Function, where creating a Variable is an error. Never destroyed: tensors may be
  // freed during static destruction.
  static Generator* global = [] {
    detail::FrameScope outside_any_trace(nullptr);
    return new Generator(0, "global_generator");
  }();
  return *global;
}

void set_seed(uint64_t seed) { global_generator().reset_from_seed(seed); }

Tensor uniform(const Shape& shape, DType dtype, double minval, double maxval, Loc loc) {
  return global_generator().uniform(shape, dtype, minval, maxval, loc);
}

Tensor normal(const Shape& shape, DType dtype, double mean, double stddev, Loc loc) {
  return global_generator().normal(shape, dtype, mean, stddev, loc);
}

}  // namespace random
}  // namespace ag
