// Debugging with run_functions_eagerly (the guide's get_MSE), and non-strict execution: an
// unused op that would fail raises eagerly but is pruned from the compiled function.
#include <ag/ag.h>

#include <cstdio>

using ag::Tensor;

Tensor get_mse(Tensor y_true, Tensor y_pred) {
  std::printf("Calculating MSE!\n");  // plain C++: prints while tracing (or every call eagerly)
  Tensor sq_diff = ag::pow(y_true - y_pred, 2);
  return ag::reduce_mean(sq_diff);
}

Tensor unused_return(Tensor x) {
  (void)ag::gather(x, Tensor(int64_t{3}));  // out of range for a 1-element x, and unused
  return x;
}

int main() {
  Tensor y_true = ag::random_uniform({5}, ag::int32, 0, 10, 1);
  Tensor y_pred = ag::random_uniform({5}, ag::int32, 0, 10, 2);
  auto mse = ag::function(get_mse, {.name = "get_mse"});

  fmt::print("-- compiled: the C++ printf runs once, while tracing\n");
  for (int i = 0; i < 3; ++i) mse(y_true, y_pred);
  fmt::print("-- ag::run_functions_eagerly(true): the body runs every call\n");
  ag::run_functions_eagerly(true);
  for (int i = 0; i < 3; ++i) mse(y_true, y_pred);
  ag::run_functions_eagerly(false);

  fmt::print("-- non-strict execution\n");
  try {
    unused_return(ag::constant({0.f}));
  } catch (const ag::InvalidArgumentError& e) {
    fmt::print("eager: InvalidArgumentError: {}\n", e.what());
  }
  auto f = ag::function(unused_return, {.name = "unused_return"});
  fmt::print("compiled: {}\n", f(ag::constant({0.f})));
  return 0;
}
// OUT: -- compiled: the C++ printf runs once, while tracing
// OUT-NEXT: Calculating MSE!
// OUT-NEXT: -- ag::run_functions_eagerly(true): the body runs every call
// OUT-NEXT: Calculating MSE!
// OUT-NEXT: Calculating MSE!
// OUT-NEXT: Calculating MSE!
// OUT-NEXT: -- non-strict execution
// OUT-NEXT: eager: InvalidArgumentError: ag::gather: index 3 is out of range [0, 1) for axis 0 of shape [1]
// OUT-NEXT: compiled: tf.Tensor([0.], shape=(1,), dtype=float32)
