// ag::random::Generator: random numbers that are drawn anew on every call of a traced function
// (TensorFlow's tf.random.Generator), and ag::random::uniform / normal, which draw from a
// process-wide Generator (tf.random.uniform / tf.random.normal). The constructors
// ag::random_uniform / ag::random_normal of construct.h are stateless: called while tracing,
// their values become constants.
#pragma once

#include <cstdint>
#include <string>

#include "ag/ops.h"
#include "ag/shape.h"
#include "ag/tensor.h"
#include "ag/variable.h"

namespace ag::random {

// A stream of random numbers with its state, {seed, counter}, in an int64[2] ag::Variable. Each
// draw takes the next numbers of the stream and advances the counter, eagerly and on every call
// of a traced function (the draw is a stateful node of the graph, run by the interpreter and by
// compiled code). The same seed gives the same sequence of draws eagerly, interpreted and
// compiled. The first draw of a new Generator equals ag::random_uniform / ag::random_normal with
// the same arguments and seed.
//
// A traced function captures a Generator by reference, like a Variable; copies share the state.
// Concurrent draws from one Generator get disjoint numbers (in some order). As for a Variable,
// a traced function may create a Generator on its first trace only.
class Generator {
 public:
  explicit Generator(uint64_t seed, std::string name = {});

  // Uniform in [minval, maxval); integers: uniform integers in [minval, maxval).
  Tensor uniform(const Shape& shape, DType dtype = float32, double minval = 0, double maxval = 1,
                 Loc loc = Loc::current());
  // Normal with the given mean and standard deviation (float32 or float64).
  Tensor normal(const Shape& shape, DType dtype = float32, double mean = 0, double stddev = 1,
                Loc loc = Loc::current());

  // Normal with the given mean and standard deviation, restricted to within two standard
  // deviations of the mean (tf.random.truncated_normal: the same distribution as re-drawing the
  // values outside): the inverse normal CDF of one uniform word per element, drawn over the
  // normal's mass in [-2, 2]. float32 or float64.
  Tensor truncated_normal(const Shape& shape, DType dtype = float32, double mean = 0, double stddev = 1,
                          Loc loc = Loc::current());
  // True with probability p (jax.random.bernoulli): a bool tensor of `shape` (p's shape when
  // empty), p broadcast to it. One uniform word per element.
  Tensor bernoulli(const Tensor& p, const Shape& shape = {}, Loc loc = Loc::current());
  // num_samples class indices per row of logits [batch, classes], drawn with probabilities
  // softmax(logits) (tf.random.categorical): int64 [batch, num_samples]. By the Gumbel-max
  // trick: argmax(logits - log(-log(u))), one uniform word per class per sample.
  Tensor categorical(const Tensor& logits, int64_t num_samples, Loc loc = Loc::current());

  // Starts the stream of `seed` from its beginning (while tracing: staged, like an assignment).
  void reset_from_seed(uint64_t seed);

  // The state: int64[2] = {seed, counter}; the counter counts the 64-bit words drawn (one per
  // uniform element, two per normal element).
  const Variable& state() const { return state_; }

 private:
  Variable state_;
};

// The process-wide Generator (tf.random.get_global_generator), seeded 0 when first used.
Generator& global_generator();
// Starts the global Generator's stream of `seed` (tf.random.set_seed); while tracing, staged
// like Generator::reset_from_seed.
void set_seed(uint64_t seed);
// Draws from the global Generator: fresh numbers on every call, eagerly and traced.
Tensor uniform(const Shape& shape, DType dtype = float32, double minval = 0, double maxval = 1, Loc loc = Loc::current());
Tensor normal(const Shape& shape, DType dtype = float32, double mean = 0, double stddev = 1, Loc loc = Loc::current());
Tensor truncated_normal(const Shape& shape, DType dtype = float32, double mean = 0, double stddev = 1,
                        Loc loc = Loc::current());
Tensor bernoulli(const Tensor& p, const Shape& shape = {}, Loc loc = Loc::current());
Tensor categorical(const Tensor& logits, int64_t num_samples, Loc loc = Loc::current());

}  // namespace ag::random
