// Custom gradients and Jacobians (TensorFlow's tf.custom_gradient, tf.recompute_grad,
// GradientTape.jacobian and batch_jacobian): a numerically stable gradient, gradient clipping
// as a custom gradient, a Hessian from a Jacobian of a gradient, and all of them compiled inside
// one AG_FUNCTION with a tensor-dependent if.
#include <ag/ag.h>

using ag::Tensor;

// TensorFlow's example: log(1 + e^x). Its plain gradient e^x / (1 + e^x) is inf / inf = NaN at
// x = 100 in float32; the custom one is not.
const auto log1pexp = ag::custom_gradient([](Tensor x) {
  const Tensor e = ag::exp(x);
  auto grad = [e](Tensor upstream) { return upstream * (1 - 1 / (1 + e)); };
  return std::pair{ag::log(1 + e), grad};
});

// Gradient clipping where the gradient flows: the identity forward, a clipped backward.
const auto clip_gradient = ag::custom_gradient([](Tensor x) {
  auto grad = [](Tensor dy) { return ag::maximum(ag::minimum(dy, 1.0f), -1.0f); };
  return std::pair{ag::identity(x), grad};
});

// f(x, y) = x^2 y + sin(y), whose Hessian is [[2y, 2x], [2x, -sin y]].
Tensor f(Tensor v) { return v[0] * v[0] * v[1] + ag::sin(v[1]); }

// Compiled: a gradient through the custom gradients, and a Jacobian, chosen by a tensor if.
AG_FUNCTION std::tuple<Tensor, Tensor> step(Tensor x) {
  ag::GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  Tensor y = clip_gradient(log1pexp(x)) * 3.0f;
  Tensor scale = ag::ones_like(x);
  if (ag::reduce_sum(x) > 10.0f) {
    scale = scale * 0.5f;
  }
  y = y * scale;
  return {tape.gradient(ag::reduce_sum(y), x), tape.jacobian(y, x)};
}

int main() {
  const Tensor x = ag::constant({0.0f, 100.0f});
  {
    ag::GradientTape tape;
    tape.watch(x);
    fmt::print("plain log(1 + e^x)' at {}: {}\n", x, tape.gradient(ag::reduce_sum(ag::log(1 + ag::exp(x))), x));
  }
  {
    ag::GradientTape tape;
    tape.watch(x);
    fmt::print("custom gradient at the same x:     {}\n", tape.gradient(ag::reduce_sum(log1pexp(x)), x));
  }

  // A Hessian: the Jacobian of a gradient (TensorFlow's nested-tapes recipe).
  const Tensor v = ag::constant({1.0f, 2.0f});
  ag::GradientTape outer;
  outer.watch(v);
  Tensor g;
  {
    ag::GradientTape inner;
    inner.watch(v);
    g = inner.gradient(f(v), v);
  }
  fmt::print("gradient of f at (1, 2): {}\nHessian: {}\n", g, outer.jacobian(g, v));

  // batch_jacobian: one Jacobian per row, here of x^2 * w (diagonal per row).
  const Tensor batch = ag::constant({{1.0f, 2.0f}, {3.0f, -1.0f}});
  ag::GradientTape bt;
  bt.watch(batch);
  const Tensor out = batch * batch * ag::constant({1.0f, 0.5f});
  fmt::print("batch_jacobian: {}\n", bt.batch_jacobian(out, batch));

  // recompute_grad: the same gradient, the forward recomputed in the backward.
  const auto layer = [](Tensor a) { return ag::tanh(a * 2.0f); };
  const auto remat = ag::recompute_grad(layer);
  ag::GradientTape rt(/*persistent=*/true);
  rt.watch(v);
  const Tensor plain = rt.gradient(ag::reduce_sum(layer(v)), v), recomputed = rt.gradient(ag::reduce_sum(remat(v)), v);
  fmt::print("recompute_grad agrees: {}\n", ag::reduce_all(ag::abs(plain - recomputed) < 1e-6f).item<bool>());

  auto compiled = ag::function(step);
  const auto [dx, jac] = compiled(ag::constant({0.0f, 3.0f}));
  fmt::print("compiled step: gradient {} (the upstream 3 clipped to 1), Jacobian {}\n", dx, jac);
  fmt::print("compiled: {} (traced {} time)\n", compiled.stats().compiles + compiled.stats().disk_hits > 0,
             compiled.tracing_count());
  return 0;
}
// OUT: plain log(1 + e^x)' at tf.Tensor([0. 100.], shape=(2,), dtype=float32): tf.Tensor([0.5 nan], shape=(2,), dtype=float32)
// OUT-NEXT: custom gradient at the same x:     tf.Tensor([0.5 1.], shape=(2,), dtype=float32)
// OUT-NEXT: gradient of f at (1, 2): tf.Tensor([4. 0.5838531], shape=(2,), dtype=float32)
// OUT-NEXT: Hessian: tf.Tensor(
// OUT-NEXT: {{\[\[}}4. 2.]
// OUT-NEXT:  [2. -0.9092974]], shape=(2, 2), dtype=float32)
// OUT-NEXT: batch_jacobian: tf.Tensor(
// OUT: recompute_grad agrees: true
// OUT-NEXT: compiled step: gradient tf.Tensor([0.5 0.95257413], shape=(2,), dtype=float32) (the upstream 3 clipped to 1), Jacobian tf.Tensor(
// OUT-NEXT: {{\[\[}}0.5 0.]
// OUT-NEXT:  [0. 0.95257413]], shape=(2, 2), dtype=float32)
// OUT: compiled: true (traced 1 time)
