// The storage dtypes in compiled code: casts bit for bit equal to the eager conversions (every
// float16 and bfloat16 value, the ties, saturation; jit.cpu_* runs them at every CPU level), a
// uint8 image pipeline and 16-bit float arithmetic three-way, a staged loop carrying a float16
// value differentiated by a tape outside the trace, and signatures with storage dtypes.
#include <cstring>
#include <random>

#include "../common/expect_error.h"
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;
using agtest::sample;
using agtest::Values;

std::vector<float> cast_inputs() {
  std::vector<float> xs = {0.0f, -0.0f, 65504.0f, 65519.99f, 65520.0f, 1e-8f, 2.9802322e-8f, 8.940697e-8f,
                           6.1e-5f, 3.3895314e38f, 3.4028235e38f, 254.5f, 255.5f, -128.5f, 300.0f, -1e10f,
                           std::numeric_limits<float>::denorm_min(), INFINITY, -INFINITY, NAN, -NAN};
  for (uint32_t b = 0; b < 0x7C00; ++b) {  // every float16 value and the midpoints above it
    const float v = static_cast<float>(ag::Float16::from_bits(static_cast<uint16_t>(b)));
    const float next = static_cast<float>(ag::Float16::from_bits(static_cast<uint16_t>(b + 1)));
    xs.push_back(b % 2 ? -v : v);
    if (std::isfinite(next)) xs.push_back(static_cast<float>((static_cast<double>(v) + next) / 2));
  }
  std::mt19937 rng(11);
  for (int i = 0; i < 50000; ++i) xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  return xs;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  return std::memcmp(ag::detail::impl_of(a)->data, ag::detail::impl_of(b)->data,
                     static_cast<size_t>(a.num_elements()) * ag::dtype_size(a.dtype())) == 0;
}

TEST(JitStorageDtypes, CastsEqualTheEagerConversionsBitForBit) {
  auto casts = [](Tensor x, Tensor halves) {
    const Tensor h = ag::cast(x, ag::float16), bf = ag::cast(x, ag::bfloat16);
    return std::tuple{h,
                      bf,
                      ag::cast(x, ag::uint8),
                      ag::cast(x, ag::int8),
                      ag::cast(ag::cast(x, ag::float64), ag::float16),
                      ag::cast(h, ag::float32),
                      ag::cast(bf, ag::float64),
                      ag::cast(h, ag::bfloat16),
                      ag::cast(halves, ag::float32),
                      ag::cast(ag::cast(halves, ag::float32), ag::float16),
                      ag::cast(ag::cast(halves, ag::int32), ag::uint8),
                      ag::cast(ag::cast(ag::cast(halves, ag::int32), ag::int8), ag::float16)};
  };
  const Tensor x = ag::constant(cast_inputs());
  std::vector<float> all_halves(65536);
  for (uint32_t b = 0; b <= 0xFFFF; ++b) all_halves[b] = static_cast<float>(ag::Float16::from_bits(static_cast<uint16_t>(b)));
  // Every bit pattern, NaN payloads included, as a float16 tensor.
  Tensor halves = ag::cast(ag::constant(all_halves), ag::float16);
  for (uint32_t b = 0; b <= 0xFFFF; ++b)
    const_cast<ag::Float16*>(halves.data<ag::Float16>())[b] = ag::Float16::from_bits(static_cast<uint16_t>(b));
  const auto eager = casts(x, halves);
  auto jit = ag::function(casts);
  const auto compiled = jit(x, halves);
  const std::vector<Tensor> e = ag::tree_leaves(eager), c = ag::tree_leaves(compiled);
  ASSERT_EQ(e.size(), c.size());
  for (size_t i = 0; i < e.size(); ++i) EXPECT_TRUE(same_bytes(e[i], c[i])) << "output " << i << ": " << c[i].str() << " vs " << e[i].str();
  EXPECT_EQ(jit.stats().compiles + jit.stats().disk_hits, 1);
}

TEST(JitStorageDtypes, ImagePipelineThreeWay) {
  std::vector<uint8_t> pixels(2 * 8 * 8 * 3);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>((i * 97 + 13) % 256);
  const Tensor images = ag::constant(pixels, {2, 8, 8, 3});
  const Tensor filters = sample(ag::float32, {3, 3, 3, 4}, 3, Values::Moderate);
  auto pipeline = [](Tensor img, Tensor w) {
    const Tensor x = ag::cast(img, ag::float32) / 255.0f;
    const Tensor y = ag::nn::max_pool2d(ag::relu(ag::nn::conv2d(x, w, 1, "SAME")), 2, 2, "VALID");
    const Tensor yh = ag::cast(y, ag::float16);
    const Tensor brightened = img + 100;                        // uint8, wraps
    const Tensor mask = img > 128;                              // unsigned order
    const Tensor half_mean = ag::reduce_mean(yh * yh, {1, 2});  // float16 arithmetic, rounded per op
    const Tensor logits = ag::matmul(ag::cast(ag::reshape(y, {2, -1}), ag::bfloat16),
                                     ag::cast(ag::ones({64, 5}, ag::float32) * 0.01f, ag::bfloat16));
    const Tensor signed_pixels = ag::cast(img, ag::int8) / 3;
    return std::tuple{brightened, mask, half_mean, logits, signed_pixels, ag::argmax(ag::reshape(img, {2, -1}), 1),
                      ag::transpose(yh, {0, 3, 1, 2}), ag::concat({yh, yh}, 3)};
  };
  const ag::FunctionStats s = agtest::expect_three_way("uint8 images", pipeline, {.rtol = 2e-3, .atol = 1e-3}, images, filters);
  EXPECT_EQ(s.compiles + s.disk_hits, 1);
}

TEST(JitStorageDtypes, StagedLoopCarriesFloat16UnderATapeOutsideTheTrace) {
  auto body = [](Tensor x) {
    auto [i, h] = ag::while_loop([](const Tensor& i, const Tensor&) { return i < 4; },
                                 [](const Tensor& i, const Tensor& h) { return std::make_tuple(i + 1, ag::tanh(h) * 1.5f + 0.25f); },
                                 std::make_tuple(ag::constant(0), x));
    return ag::reduce_sum(h * h);
  };
  const Tensor x = ag::cast(sample(ag::float32, {6}, 4, Values::Moderate), ag::float16);
  auto gradient = [&](auto&& f) {
    ag::GradientTape tape;
    tape.watch(x);
    const Tensor loss = f(x);
    return std::make_tuple(loss, tape.gradient(loss, x));
  };
  const auto eager = gradient(body);
  EXPECT_EQ(std::get<1>(eager).dtype(), ag::float16);
  auto interp = ag::function(body, {.jit_compile = false});
  auto jit = ag::function(body);
  agtest::expect_same(eager, gradient(interp), {.rtol = 2e-3, .atol = 2e-3}, "interpreter");
  agtest::expect_same(eager, gradient(jit), {.rtol = 2e-3, .atol = 2e-3}, "jit");
  EXPECT_EQ(jit.stats().compiles + jit.stats().disk_hits, 1);
}

TEST(JitStorageDtypes, SignaturesKeepTheStorageDtype) {
  auto f = ag::function([](Tensor x) { return x * 2; }, {.input_signature = {TensorSpec({-1}, ag::uint8)}});
  EXPECT_EQ(f(ag::constant(std::vector<uint8_t>{1, 200})).to_vector<int>(), (std::vector<int>{2, 144}));
  EXPECT_EQ(f(ag::constant(std::vector<uint8_t>{3, 4, 5})).to_vector<int>(), (std::vector<int>{6, 8, 10}));
  EXPECT_EQ(f.stats().traces, 1);
  agtest::expect_error<ag::TypeError>([&] { f(ag::constant(std::vector<int8_t>{1})); }, {"uint8", "int8"});

  auto g = ag::function([](Tensor x) { return x + x; });
  const Tensor h = ag::cast(ag::constant(std::vector<float>{1.5f}), ag::float16);
  const Tensor bf = ag::cast(ag::constant(std::vector<float>{1.5f}), ag::bfloat16);
  EXPECT_EQ(g(h).dtype(), ag::float16);
  EXPECT_EQ(g(bf).dtype(), ag::bfloat16);
  EXPECT_EQ(g(h).to_vector<float>(), (std::vector<float>{3.0f}));
  EXPECT_EQ(g.stats().traces, 2);  // a dtype is part of the signature
}

}  // namespace
