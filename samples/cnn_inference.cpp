// A LeNet-style CNN on uint8 images: conv, max-pool, conv, max-pool, dense, dense, softmax, all
// from ag::nn. The images arrive as uint8 (as a camera or a PNG decoder gives them) and are
// normalized inside the compiled function. A few Adam steps teach the network three synthetic
// classes (horizontal stripes, vertical stripes, a checkerboard); then `classify` runs the whole
// network as one compiled Function on a fresh uint8 batch.
#include <ag/ag.h>

#include <chrono>
#include <cstdint>
#include <vector>

using ag::Tensor;

constexpr int kSize = 28, kClasses = 3;

// `count` noisy images of class (index % 3), [count, 28, 28, 1] uint8, and their labels (int32).
std::pair<Tensor, Tensor> synthetic_images(int count, uint32_t seed) {
  std::vector<uint8_t> pixels;
  std::vector<int32_t> labels;
  uint32_t state = seed;
  auto noise = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>(state >> 27);  // 0..31
  };
  for (int i = 0; i < count; ++i) {
    const int label = i % kClasses, period = 3 + (i / kClasses) % 3, phase = i % period;
    for (int r = 0; r < kSize; ++r)
      for (int c = 0; c < kSize; ++c) {
        const bool on = label == 0 ? (r + phase) / period % 2 == 0
                        : label == 1 ? (c + phase) / period % 2 == 0
                                     : ((r + phase) / period + (c + phase) / period) % 2 == 0;
        pixels.push_back(static_cast<uint8_t>((on ? 200 : 30) + noise()));
      }
    labels.push_back(label);
  }
  return {ag::constant(pixels, {count, kSize, kSize, 1}), ag::constant(labels)};
}

struct LeNet {
  ag::Variable conv1, conv2, dense1, bias1, dense2, bias2;

  explicit LeNet(ag::random::Generator& g)
      : conv1(g.truncated_normal({5, 5, 1, 6}, ag::float32, 0, 0.3), "conv1"),
        conv2(g.truncated_normal({5, 5, 6, 16}, ag::float32, 0, 0.1), "conv2"),
        dense1(g.truncated_normal({4 * 4 * 16, 64}, ag::float32, 0, 0.05), "dense1"),
        bias1(ag::zeros({64}), "bias1"),
        dense2(g.truncated_normal({64, kClasses}, ag::float32, 0, 0.1), "dense2"),
        bias2(ag::zeros({kClasses}), "bias2") {}

  // Logits [batch, 3] of images [batch, 28, 28, 1] (uint8).
  Tensor logits(const Tensor& images) {
    const Tensor x = ag::cast(images, ag::float32) / 255.0f;
    Tensor h = ag::nn::max_pool2d(ag::relu(ag::nn::conv2d(x, conv1, 1, "VALID")), 2, 2, "VALID");  // [b,12,12,6]
    h = ag::nn::max_pool2d(ag::relu(ag::nn::conv2d(h, conv2, 1, "VALID")), 2, 2, "VALID");          // [b,4,4,16]
    h = ag::relu(ag::nn::bias_add(ag::matmul(ag::reshape(h, {-1, 4 * 4 * 16}), dense1), bias1));
    return ag::nn::bias_add(ag::matmul(h, dense2), bias2);
  }
};

LeNet* g_net = nullptr;

// Class probabilities of a uint8 batch: the whole network, compiled once per batch size.
AG_FUNCTION Tensor classify(Tensor images) { return ag::nn::softmax(g_net->logits(images)); }

int main() {
  ag::random::Generator gen(42);
  LeNet net(gen);
  g_net = &net;

  // Training: a few Adam steps on 96 images (the sparse cross-entropy takes int32 labels).
  const auto [train_x, train_y] = synthetic_images(96, 1);
  ag::optimizers::Adam adam(0.01);
  auto train_step = ag::function([&](Tensor images, Tensor labels) {
    ag::GradientTape tape;
    const Tensor loss = ag::reduce_mean(ag::nn::sparse_softmax_cross_entropy_with_logits(labels, net.logits(images)));
    const std::vector<Tensor> g = tape.gradient(loss, {net.conv1, net.conv2, net.dense1, net.bias1, net.dense2, net.bias2});
    adam.apply_gradients({{g[0], &net.conv1}, {g[1], &net.conv2}, {g[2], &net.dense1}, {g[3], &net.bias1},
                          {g[4], &net.dense2}, {g[5], &net.bias2}});
    return loss;
  }, {.name = "train_step"});
  float first_loss = 0, loss = 0;
  for (int step = 0; step < 40; ++step) {
    loss = train_step(train_x, train_y).item<float>();
    if (step == 0) first_loss = loss;
  }
  fmt::print("images: {} {}; training loss {:.3f} -> {:.3f}\n", ag::dtype_name(train_x.dtype()), train_x.shape().str(),
             first_loss, loss);

  // Inference on images the network has not seen, compiled, and the same eagerly.
  const auto [test_x, test_y] = synthetic_images(30, 7);
  auto compiled = ag::function(classify);
  const Tensor probs = compiled(test_x);
  const Tensor eager = classify(test_x);
  const float accuracy = ag::reduce_mean(ag::cast(ag::equal(ag::cast(ag::argmax(probs, 1), ag::int32), test_y), ag::float32)).item<float>();
  const float max_diff = ag::reduce_max(ag::abs(probs - eager)).item<float>();
  fmt::print("probabilities {}, rows sum to 1: {}\n", probs.shape().str(),
             ag::reduce_max(ag::abs(ag::reduce_sum(probs, 1) - 1.0f)).item<float>() < 1e-5f);
  fmt::print("accuracy on new images above 0.9: {} ({:.2f}); compiled == eager within 1e-5: {}\n", accuracy > 0.9f,
             accuracy, max_diff < 1e-5f);
  fmt::print("{}\n", compiled.get_concrete_function(test_x).signature());

  auto time_of = [](auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i) f();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 20;
  };
  fmt::print("a batch of 30: eager {:.2f} ms, compiled {:.2f} ms\n", time_of([&] { classify(test_x); }),
             time_of([&] { compiled(test_x); }));
  return 0;
}
// OUT: images: uint8 [96,28,28,1]; training loss
// OUT: probabilities [30,3], rows sum to 1: true
// OUT: accuracy on new images above 0.9: true ({{[0-9.]+}}); compiled == eager within 1e-5: true
// OUT: classify(images: TensorSpec(shape=(30, 28, 28, 1), dtype=uint8)) -> TensorSpec(shape=(30, 3), dtype=float32)
// OUT: a batch of 30: eager
