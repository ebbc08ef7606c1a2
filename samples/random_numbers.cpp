// Random numbers (the guide's add_noise, in "Introduction to graphs": np.random.randn inside a
// traced function is frozen into the graph as a constant, tf.random.normal draws on every call).
// In C++ the counterpart of np.random.randn is any C++ random number; the counterpart of
// tf.random.normal is ag::random::normal, a draw from the global ag::random::Generator, which is
// a node of the graph. The last part is a Monte Carlo estimate of pi with a Generator of its
// own: a tensor while loop, staged by ag-rewrite, drawing a fresh batch of points on every
// iteration, compiled by the JIT.
#include <ag/ag.h>

#include <random>

using ag::Tensor;

std::mt19937 cpp_rng(1);
ag::random::Generator rng(42, "rng");

// A C++ random number: computed while tracing, so the graph holds one fixed value.
Tensor add_noise_cpp() {
  std::normal_distribution<float> normal;
  return ag::eye(3) + ag::constant({{normal(cpp_rng), normal(cpp_rng), normal(cpp_rng)},
                                    {normal(cpp_rng), normal(cpp_rng), normal(cpp_rng)},
                                    {normal(cpp_rng), normal(cpp_rng), normal(cpp_rng)}});
}

// tf.random.normal: a draw from the global Generator, a RandomNormal node run on every call.
Tensor add_noise() { return ag::eye(3) + ag::random::normal({3, 3}); }

AG_FUNCTION Tensor estimate_pi(Tensor batches) {
  Tensor inside = 0;
  Tensor i = 0;
  while (i < batches) {
    Tensor x = rng.uniform({10000});
    Tensor y = rng.uniform({10000});
    inside += ag::reduce_sum(ag::cast(x * x + y * y < 1.f, ag::int32));
    i += 1;
  }
  return ag::cast(inside, ag::float64) * 4.0 / (ag::cast(batches, ag::float64) * 10000.0);
}

bool differ(const Tensor& a, const Tensor& b) { return a.to_vector<float>() != b.to_vector<float>(); }

int main() {
  fmt::print("add_noise_cpp eagerly, two calls differ: {}\n", differ(add_noise_cpp(), add_noise_cpp()));
  auto traced_cpp = ag::function(add_noise_cpp, {.name = "add_noise_cpp"});
  fmt::print("add_noise_cpp traced, two calls differ: {} (the C++ numbers were frozen into the graph)\n",
             differ(traced_cpp(), traced_cpp()));

  ag::random::set_seed(42);  // tf.random.set_seed
  auto traced = ag::function(add_noise, {.name = "add_noise"});
  const Tensor first = traced(), second = traced();
  fmt::print("add_noise traced, two calls differ: {}\n", differ(first, second));
  // The same seed gives the same sequence of draws eagerly: restart the stream and compare.
  ag::random::set_seed(42);
  const Tensor eager_first = add_noise(), eager_second = add_noise();
  fmt::print("the same numbers eagerly from the same seed: {}\n", !differ(first, eager_first) && !differ(second, eager_second));
  fmt::print("the global generator's state (seed, words drawn): {}\n", ag::random::global_generator().state().value());
  fmt::print("\n{}\n", traced.get_concrete_function().graph_text());

  auto pi = ag::function(estimate_pi);
  for (int batches : {1, 10, 100})
    fmt::print("pi from {:>7} points: {:.4f}\n", batches * 10000, pi(Tensor(batches)).item<double>());
  fmt::print("tracing_count: {}\n", pi.tracing_count());
  return 0;
}
// OUT: add_noise_cpp eagerly, two calls differ: true
// OUT-NEXT: add_noise_cpp traced, two calls differ: false (the C++ numbers were frozen into the graph)
// OUT-NEXT: add_noise traced, two calls differ: true
// OUT-NEXT: the same numbers eagerly from the same seed: true
// OUT-NEXT: the global generator's state (seed, words drawn): tf.Tensor([42 36], shape=(2,), dtype=int64)
// OUT: RandomNormal() {state=variable 'global_generator' (int64[2]), shape=[3,3], mean=0, stddev=1}
// OUT: pi from   10000 points: 3.1
// OUT-NEXT: pi from  100000 points: 3.1
// OUT-NEXT: pi from 1000000 points: 3.14
// OUT-NEXT: tracing_count: 1
