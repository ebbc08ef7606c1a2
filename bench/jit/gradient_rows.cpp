// W8b: the loss of an MLP 784-256-10 (tanh hidden layer: its second derivative is not zero,
// unlike relu's), batch 64, as compiled Functions: the loss alone; its gradient with respect to
// the first layer's weights (ag::grad); a Hessian-vector product, the second-order gradient
// ag::grad(w -> sum(grad(loss)(w) * v)) (the usual way to use second order at this size, as in
// Newton-CG and the Pearlmutter trick); and the Jacobian of the 10 logits of one example with
// respect to the second layer's bias (a staged loop of 10 backward passes). Each against the
// one before it, in the same run.
#include "gradient_rows.h"

#include "ag/ag.h"
#include "ag/detail/parallel.h"
#include "table.h"

namespace bench {

using namespace table;

namespace {

ag::Tensor mlp_loss(ag::Tensor w1, ag::Tensor x, ag::Tensor y, ag::Tensor w2) {
  const ag::Tensor logits = ag::matmul(ag::tanh(ag::matmul(x, w1)), w2);
  const ag::Tensor shifted = logits - ag::stop_gradient(ag::reduce_max(logits, 1, true));
  const ag::Tensor log_softmax = shifted - ag::log(ag::reduce_sum(ag::exp(shifted), 1, true));
  return -ag::reduce_mean(ag::reduce_sum(y * log_softmax, 1));
}

}  // namespace

void gradient_rows(int reps) {
  constexpr int64_t kBatch = 64;
  const ag::Tensor x = ag::random_uniform({kBatch, 784}, ag::float32, 0, 1, 1);
  std::vector<float> onehot(kBatch * 10, 0.0f);
  for (int64_t i = 0; i < kBatch; ++i) onehot[static_cast<size_t>(i * 10 + (i * 7) % 10)] = 1.0f;
  const ag::Tensor y = ag::constant(onehot, {kBatch, 10});
  const ag::Tensor w1 = ag::random_normal({784, 256}, ag::float32, 0, 0.05, 2);
  const ag::Tensor w2 = ag::random_normal({256, 10}, ag::float32, 0, 0.05, 3);
  const ag::Tensor v = ag::random_normal({784, 256}, ag::float32, 0, 1, 4);

  auto loss = ag::function(mlp_loss);
  auto grad = ag::grad(mlp_loss);
  auto hvp = ag::grad([grad, v](ag::Tensor w, ag::Tensor xs, ag::Tensor ys, ag::Tensor w_out) {
    return ag::reduce_sum(grad(w, xs, ys, w_out) * v);
  });
  auto jacobian = ag::function([](ag::Tensor xs, ag::Tensor w, ag::Tensor w_out, ag::Tensor b) {
    ag::GradientTape tape;
    tape.watch(b);
    const ag::Tensor logits = ag::matmul(ag::tanh(ag::matmul(ag::slice(xs, {0, 0}, {1, -1}), w)), w_out) + b;
    return tape.jacobian(logits, b);
  });
  const ag::Tensor b = ag::zeros({10});
  const ag::detail::ScopedNumThreads one(1);
  const double t_loss = time_ns([&] { keep(loss(w1, x, y, w2)); }, 10, reps);
  const double t_grad = time_ns([&] { keep(grad(w1, x, y, w2)); }, 10, reps);
  const double t_hvp = time_ns([&] { keep(hvp(w1, x, y, w2)); }, 10, reps);
  const double t_jac = time_ns([&] { keep(jacobian(x, w1, w2, b)); }, 10, reps);

  const char* w = "W8b second order, MLP 784-256(tanh)-10 loss, batch 64, 1 thread";
  row(w, "loss (ag::function)", t_loss);
  row(w, "gradient d loss / d w1 (ag::grad)", t_grad, ratio_str(t_grad / t_loss, "the loss"));
  row(w, "Hessian-vector product (ag::grad of ag::grad)", t_hvp, ratio_str(t_hvp / t_grad, "the gradient"),
      "(2-4x in theory)");
  row(w, "Jacobian of one example's 10 logits by a bias (tape.jacobian)", t_jac);
}

}  // namespace bench
