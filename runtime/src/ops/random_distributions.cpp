// Distributions drawn from a Generator's uniform stream and written in ops (truncated_normal,
// bernoulli, categorical): staged like any draw (a stateful node, fresh numbers on every call), and equal
// eagerly, interpreted and compiled for one seed.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "ag/construct.h"
#include "ag/detail/ops_internal.h"
#include "ag/ops.h"
#include "ag/random.h"

namespace ag::random {
namespace {

[[noreturn]] void fail(const char* fn, SourceLoc loc, const std::string& msg) {
  throw ValueError(fmt::format("{}: {}{}", fn, msg, detail::at(loc)));
}

}  // namespace

Tensor Generator::truncated_normal(const Shape& shape, DType dtype, double mean, double stddev, Loc loc) {
  if (dtype != DType::Float32 && dtype != DType::Float64)
    throw TypeError(fmt::format("Generator::truncated_normal: the dtype must be float32 or float64, got {}{}",
                                dtype_name(dtype), detail::at(loc)));
  if (!(stddev >= 0)) fail("Generator::truncated_normal", loc, fmt::format("stddev must be at least 0, got {}", stddev));
  // y = 2u - 1 uniform over the standard normal's mass in [-2, 2], x = sqrt(2) erfinv(y).
  const double mass = std::erf(2 / std::sqrt(2.0));
  const Tensor y = uniform(shape, dtype, -mass, mass, loc);
  // erfinv by Giles' single-precision polynomial in w = -log(1 - y^2) (w < 2.5 here: its
  // central branch), then one Newton step on erf, which brings float64 to ~1e-15.
  const Tensor w = -log(1.0 - y * y, loc) - 2.5;
  Tensor p = w * 2.81022636e-08 + 3.43273939e-07;
  for (double c : {-3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941})
    p = p * w + c;
  Tensor z = p * y;
  z = z - (erf(z, loc) - y) / (exp(-(z * z), loc) * (2 / std::sqrt(M_PI)));
  const Tensor x = clip_by_value(z * std::sqrt(2.0), -2.0, 2.0);
  return x * stddev + mean;
}

Tensor Generator::bernoulli(const Tensor& p, const Shape& shape, Loc loc) {
  if (!is_floating(p.dtype()))
    throw TypeError(fmt::format("Generator::bernoulli: p must be a floating-point tensor, got {}{}",
                                dtype_name(p.dtype()), detail::at(loc)));
  Shape out = shape;
  if (shape.rank() == 0) {
    if (p.has_unknown_rank()) fail("Generator::bernoulli", loc, "p has an unknown rank: give the shape");
    out = p.shape();
  }
  for (int64_t d : out)
    if (d < 0) fail("Generator::bernoulli", loc, "the shape " + out.str() + " has a dim unknown while tracing; give it");
  return less(Operand(uniform(out, p.dtype(), 0, 1, loc), loc), Operand(p, loc));
}

Tensor Generator::categorical(const Tensor& logits, int64_t num_samples, Loc loc) {
  if (!is_floating(logits.dtype()))
    throw TypeError(fmt::format("Generator::categorical: logits must be a floating-point tensor, got {}{}",
                                dtype_name(logits.dtype()), detail::at(loc)));
  if (logits.has_unknown_rank() || logits.rank() != 2)
    fail("Generator::categorical", loc, "logits must be [batch, classes]");
  const int64_t batch = logits.shape()[0], classes = logits.shape()[1];
  if (batch < 0 || classes < 0) fail("Generator::categorical", loc, "logits' dims must be known while tracing");
  if (classes == 0) fail("Generator::categorical", loc, "logits have no classes");
  if (num_samples < 0) fail("Generator::categorical", loc, fmt::format("num_samples is negative ({})", num_samples));
  // u in [tiny, 1): -log(-log(u)) is finite.
  const double tiny = logits.dtype() == DType::Float32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
  const Tensor u = uniform({batch, num_samples, classes}, logits.dtype(), tiny, 1, loc);
  const Tensor gumbel = -log(-log(u, loc), loc);
  return argmax(expand_dims(logits, 1, loc) + gumbel, 2, loc);
}

Tensor truncated_normal(const Shape& shape, DType dtype, double mean, double stddev, Loc loc) {
  return global_generator().truncated_normal(shape, dtype, mean, stddev, loc);
}
Tensor bernoulli(const Tensor& p, const Shape& shape, Loc loc) { return global_generator().bernoulli(p, shape, loc); }
Tensor categorical(const Tensor& logits, int64_t num_samples, Loc loc) {
  return global_generator().categorical(logits, num_samples, loc);
}

}  // namespace ag::random
