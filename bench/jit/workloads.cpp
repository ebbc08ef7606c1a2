// The workloads written as a user would write them (control flow in the operator form ag-rewrite
// emits).
#include "workloads.h"

namespace bench {

ag::Tensor power(ag::Tensor x) {
  ag::Tensor r = ag::eye(10, ag::int32);
  for (int i = 0; i < 100; ++i) r = ag::matmul(x, r);
  return r;
}

ag::Tensor collatz(ag::Tensor n) {
  ag::Tensor steps = 0;
  ag::while_stmt([&] { return n > 1; },
                 [&] {
                   ag::if_stmt(n % 2 == 0, [&] { n = n / 2; }, [&] { n = 3 * n + 1; }, ag::state(n), {"n"},
                               AG_SOURCE_LOC("workloads.cpp", 19));
                   steps += 1;
                 },
                 ag::state(n, steps), {"n", "steps"}, AG_SOURCE_LOC("workloads.cpp", 17));
  return steps;
}

ag::Tensor tanh_chain(ag::Tensor x) { return ag::relu(x * kA + kB) * kC - ag::tanh(x); }
ag::Tensor cheap_chain(ag::Tensor x) { return ag::maximum(x * kA + kB, 0.0f) * kC + x; }
ag::Tensor trivial(ag::Tensor x) { return x + 1.0f; }
ag::Tensor dense_layer(ag::Tensor x, ag::Tensor w, ag::Tensor b) { return ag::tanh(ag::matmul(x, w) + b); }
ag::Tensor sum_squares(ag::Tensor x) { return ag::reduce_sum(x * x + 1.0f); }
ag::Tensor column_sums(ag::Tensor x) { return ag::reduce_sum(x, {0}); }
ag::Tensor row_argmax(ag::Tensor x) { return ag::argmax(x, 1); }
ag::Tensor row_variances(ag::Tensor x) { return ag::reduce_mean(ag::square(x - ag::reduce_mean(x, {1}, true)), {1}); }

ag::Tensor dense_stack(ag::Tensor x, ag::Tensor w, ag::Tensor b) {
  for (int i = 0; i < 40; ++i) {
    const ag::Tensor h = ag::tanh(ag::matmul(x, w) + b * static_cast<float>(i + 1));
    x = h - ag::reduce_max(h, {1}, true) + ag::reduce_mean(h, {0}, true);
  }
  return ag::reduce_sum(x);
}

ag::Tensor estimate_pi(ag::random::Generator& g, ag::Tensor batches) {
  ag::Tensor inside = 0;
  ag::Tensor i = 0;
  ag::while_stmt([&] { return i < batches; },
                 [&] {
                   const ag::Tensor x = g.uniform({kPiBatch}), y = g.uniform({kPiBatch});
                   inside += ag::reduce_sum(ag::cast(x * x + y * y < 1.0f, ag::int32));
                   i += 1;
                 },
                 ag::state(inside, i), {"inside", "i"}, AG_SOURCE_LOC("workloads.cpp", 33));
  return ag::cast(inside, ag::float64) * 4.0 / (ag::cast(batches, ag::float64) * static_cast<double>(kPiBatch));
}

}  // namespace bench
