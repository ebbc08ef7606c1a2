// A model's parameters as a struct (JAX's pytrees, tf.nest): ag::function takes and returns
// plain structs of tensors, numbers and containers, flattened field by field into the signature
// ("params.hidden.w: TensorSpec(...)"); a field's new shape retraces, and the log names the
// field; ag::grad with respect to a struct returns the struct; ag::tree_map updates it.
#include <ag/ag.h>

#include <cstdlib>

using ag::Tensor;

struct Layer {
  Tensor w, b;
};
struct Params {
  Layer hidden;
  Layer out;
};

AG_FUNCTION Tensor predict(const Params& params, Tensor x) {
  const Tensor h = ag::tanh(ag::matmul(x, params.hidden.w) + params.hidden.b);
  return ag::matmul(h, params.out.w) + params.out.b;
}

AG_FUNCTION Tensor loss(const Params& params, Tensor x, Tensor y) {
  return ag::reduce_mean(ag::square(predict(params, x) - y));
}

// Gradient clipping by global norm: a staged if (the norm is a tensor) that assigns a whole
// struct; its fields are the if's state ("grads.hidden.w", ...).
AG_FUNCTION Params clip_by_global_norm(Params grads, Tensor max_norm) {
  Tensor sq = 0.f;
  for (const Tensor& g : ag::tree_leaves(grads)) sq += ag::reduce_sum(ag::square(g));
  const Tensor norm = ag::sqrt(sq);
  if (norm > max_norm) {
    grads = ag::tree_map([&](Tensor g) { return g * (max_norm / norm); }, grads);
  }
  return grads;
}

Params init(int64_t in, int64_t hidden, int64_t out) {
  return {{ag::random_normal({in, hidden}, ag::float32, 0, 0.8, 1), ag::zeros({hidden})},
          {ag::random_normal({hidden, out}, ag::float32, 0, 0.3, 2), ag::zeros({out})}};
}

int main() {
  // As if run with AG_LOG=retrace: every trace says why it happened; shown below for one call.
  ::setenv("AG_LOG", "retrace", /*overwrite=*/0);
  ag::set_log_sink([](std::string_view) {});
  // y = sin(3x) on [-1, 1].
  const Tensor x = ag::reshape(ag::cast(ag::range(40), ag::float32) / 20.f - 1.f, {40, 1});
  const Tensor y = ag::sin(x * 3.f);

  auto f = ag::function(predict);
  Params params = init(1, 16, 1);
  f(params, x);
  fmt::print("{}\n", f.pretty_printed_concrete_signatures());

  // A field's new shape is a new signature: the retrace log names the field.
  ag::set_log_sink([](std::string_view line) { fmt::print("log: {}", line); });
  f(init(1, 32, 1), x);
  ag::set_log_sink([](std::string_view) {});
  fmt::print("predict traced {} times\n", f.tracing_count());

  // Training: ag::grad of the loss with respect to the struct returns a Params.
  auto grad = ag::grad(loss);
  auto clip = ag::function(clip_by_global_norm);
  auto value = ag::function(loss);
  const float first = value(params, x, y).item<float>();
  for (int step = 0; step < 300; ++step) {
    const Params g = clip(grad(params, x, y), Tensor(1.0f));
    params = ag::tree_map([](Tensor p, Tensor dp) { return p - 0.1f * dp; }, params, g);
  }
  const float last = value(params, x, y).item<float>();
  fmt::print("loss {:.4f} -> {:.4f}: fell {}x, traces of grad: {}, of clip: {}\n", first, last,
             static_cast<int>(first / last), grad.tracing_count(), clip.tracing_count());
  const Params g = grad(params, x, y);
  fmt::print("d loss / d params.out.b = {}\n", g.out.b);
  fmt::print("{}\n", grad.pretty_printed_concrete_signatures());
  ag::set_log_sink(nullptr);
  return 0;
}
// OUT: predict(params.hidden.w: TensorSpec(shape=(1, 16), dtype=float32), params.hidden.b: TensorSpec(shape=(16,), dtype=float32), params.out.w: TensorSpec(shape=(16, 1), dtype=float32), params.out.b: TensorSpec(shape=(1,), dtype=float32), x: TensorSpec(shape=(40, 1), dtype=float32)) -> TensorSpec(shape=(40, 1), dtype=float32)
// OUT: log: {{.*}}arg 0 'params.hidden.w': shape [1,16] -> [1,32]
// OUT: predict traced 2 times
// OUT: loss {{.*}}: fell {{[1-9][0-9]+}}x, traces of grad: 1, of clip: 1
// OUT: d loss / d params.out.b = tf.Tensor([{{.*}}], shape=(1,), dtype=float32)
// OUT-NEXT: grad(loss)(params.hidden.w: TensorSpec(shape=(1, 16), dtype=float32), {{.*}}, x: {{.*}}, y: {{.*}}) -> (TensorSpec(shape=(1, 16), dtype=float32), {{.*}})
