// Distributions drawn from a Generator's uniform stream and written in ops (bernoulli,
// categorical): staged like any draw (a stateful node, fresh numbers on every call), and equal
// eagerly, interpreted and compiled for one seed.
#include <fmt/format.h>

#include <limits>

#include "ag/construct.h"
#include "ag/detail/ops_internal.h"
#include "ag/random.h"

namespace ag::random {
namespace {

[[noreturn]] void fail(const char* fn, SourceLoc loc, const std::string& msg) {
  throw ValueError(fmt::format("{}: {}{}", fn, msg, detail::at(loc)));
}

}  // namespace

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

Tensor bernoulli(const Tensor& p, const Shape& shape, Loc loc) { return global_generator().bernoulli(p, shape, loc); }
Tensor categorical(const Tensor& logits, int64_t num_samples, Loc loc) {
  return global_generator().categorical(logits, num_samples, loc);
}

}  // namespace ag::random
