// Gradients (the tf.function guide's first usage example, and JAX's grad): a GradientTape around
// a Function call, a gradient through a data-dependent while loop, and ag::grad /
// ag::value_and_grad, which trace and compile the forward and the backward as one graph.
#include <ag/ag.h>

using ag::Tensor;

// The guide: @tf.function def add(a, b): return a + b
AG_FUNCTION Tensor add(Tensor a, Tensor b) { return a + b; }

// y = x^n by a tensor while loop (staged by ag-rewrite): its trip count is data.
AG_FUNCTION Tensor power(Tensor x, Tensor n) {
  Tensor y = ag::ones_like(x);
  Tensor i = 0;
  while (i < n) {
    y = y * x;
    i += 1;
  }
  return y;
}

// A loop only a tensor can stop: y grows by 1.5x until its sum passes `limit` (a tensor break).
// ag::grad differentiates it inside the trace, through the staged while.
AG_FUNCTION Tensor grow_until(Tensor x, Tensor limit) {
  Tensor y = x;
  while (true) {
    y = y * 1.5f;
    if (ag::reduce_sum(y) > limit) break;
  }
  return y;
}

Tensor loss(Tensor w, Tensor x) { return ag::reduce_sum(ag::square(ag::tanh(x * w) - 0.5f)); }

int main() {
  // v = tf.Variable(1.0); with tf.GradientTape() as tape: result = add(v, 1.0)
  ag::Variable v(1.0f, "v");
  auto traced_add = ag::function(add);
  Tensor result;
  ag::GradientTape tape;
  result = traced_add(v, ag::constant(1.0f));
  fmt::print("add(v, 1.0) = {}, d/dv = {}\n", result, tape.gradient(result, v));

  // Under a tape a Function runs op by op, so the tape records the iterations that ran.
  auto traced_power = ag::function(power);
  const Tensor x = ag::constant(1.5f);
  for (int n : {2, 3, 5}) {
    ag::GradientTape t;
    t.watch(x);
    const Tensor y = traced_power(x, Tensor(n));
    fmt::print("power(1.5, {}) = {:.4f}, d/dx = {:.4f} (n x^(n-1) = {:.4f})\n", n, y.item<float>(),
               t.gradient(y, x).item<float>(), n * std::pow(1.5f, static_cast<float>(n - 1)));
  }

  // Differentiated inside the trace: the staged loop's iterations are saved and replayed backwards.
  auto d_grow = ag::grad(grow_until);
  for (float limit : {1.0f, 4.0f, 20.0f}) {
    const Tensor start = ag::constant({0.5f, 0.25f});
    const Tensor y = grow_until(start, ag::constant(limit));
    fmt::print("grow_until(limit {}): {}, d/dx = {} (1.5^steps)\n", limit, y, d_grow(start, ag::constant(limit)));
  }
  fmt::print("grad(grow_until) traced {} time(s)\n", d_grow.tracing_count());

  // jax.grad and jax.value_and_grad: Functions whose graph holds the forward and the backward.
  auto d_loss = ag::grad(loss);
  auto loss_and_grads = ag::value_and_grad(loss, ag::argnums<0, 1>);
  const Tensor w = ag::constant({0.5f, -1.0f, 2.0f}), xs = ag::constant({1.0f, 2.0f, -0.5f});
  fmt::print("grad(loss)(w, x) = {}\n", d_loss(w, xs));
  const auto [value, dw, dx] = loss_and_grads(w, xs);
  fmt::print("value_and_grad: loss {:.4f}, d/dw {}, d/dx {}\n", value.item<float>(), dw, dx);
  fmt::print("the same d/dw: {}\n", ag::reduce_all(ag::abs(dw - d_loss(w, xs)) < 1e-6f).item<bool>());
  fmt::print("\n{}\n", d_loss.get_concrete_function(w, xs).graph_text());
  return 0;
}
// OUT: add(v, 1.0) = tf.Tensor(2.0, shape=(), dtype=float32), d/dv = tf.Tensor(1.0, shape=(), dtype=float32)
// OUT-NEXT: power(1.5, 2) = 2.2500, d/dx = 3.0000 (n x^(n-1) = 3.0000)
// OUT-NEXT: power(1.5, 3) = 3.3750, d/dx = 6.7500 (n x^(n-1) = 6.7500)
// OUT-NEXT: power(1.5, 5) = 7.5938, d/dx = 25.3125 (n x^(n-1) = 25.3125)
// OUT-NEXT: grow_until(limit 1): tf.Tensor([0.75 0.375], shape=(2,), dtype=float32), d/dx = tf.Tensor([1.5 1.5], shape=(2,), dtype=float32) (1.5^steps)
// OUT-NEXT: grow_until(limit 4): tf.Tensor([3.796875 1.8984375], shape=(2,), dtype=float32), d/dx = tf.Tensor([7.59375 7.59375], shape=(2,), dtype=float32) (1.5^steps)
// OUT-NEXT: grow_until(limit 20): tf.Tensor([19.22168 9.61084], shape=(2,), dtype=float32), d/dx = tf.Tensor([38.44336 38.44336], shape=(2,), dtype=float32) (1.5^steps)
// OUT-NEXT: grad(grow_until) traced 1 time(s)
// OUT-NEXT: grad(loss)(w, x) = tf.Tensor([
// OUT: the same d/dw: true
// OUT: graph grad(
// OUT: Tanh
