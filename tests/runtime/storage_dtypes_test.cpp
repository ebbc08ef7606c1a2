// The storage dtypes uint8, int8, float16, bfloat16: conversions against an independent
// nearest-value reference, arithmetic computed in the wide dtype and rounded or wrapped back,
// errors that name the dtype, printing, data access, graph text, and gradients through them.
#include <gtest/gtest.h>

#include <ag/ag.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "../common/expect_error.h"

namespace {

using ag::BFloat16;
using ag::Float16;
using ag::Tensor;

// The bits of the 16-bit float nearest to x, ties to the even bits, found by searching the
// positive values (monotonic in their bits) rather than by rounding bits: an independent check
// of ag/half.h. `max_bits` is the largest finite value; one step past it counts as infinity's
// rounding point (the value an exponent one larger would have).
template <class Half>
uint16_t nearest_bits(float x, uint16_t max_bits, uint16_t inf_bits) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double ax = std::abs(static_cast<double>(x));
  auto value = [&](uint32_t bits) {
    if (bits > max_bits) {  // past the largest finite: the next value in the same spacing
      const double top = static_cast<float>(Half::from_bits(max_bits));
      const double below = static_cast<float>(Half::from_bits(static_cast<uint16_t>(max_bits - 1)));
      return top + (top - below);
    }
    return static_cast<double>(static_cast<float>(Half::from_bits(static_cast<uint16_t>(bits))));
  };
  uint32_t lo = 0, hi = max_bits + 1u;  // value(lo) <= ax < value(hi) unless ax >= value(hi)
  if (ax >= value(hi)) return sign | inf_bits;
  while (hi - lo > 1) {
    const uint32_t mid = (lo + hi) / 2;
    (value(mid) <= ax ? lo : hi) = mid;
  }
  const double dl = ax - value(lo), dh = value(hi) - ax;
  uint32_t pick = dl < dh ? lo : dh < dl ? hi : (lo % 2 == 0 ? lo : hi);
  if (pick > max_bits) pick = inf_bits;
  return static_cast<uint16_t>(sign | pick);
}

std::vector<float> conversion_inputs() {
  std::vector<float> xs = {0.0f, -0.0f, 1.0f, -1.0f, 0.1f, 65504.0f, 65519.99f, 65520.0f, 65536.0f, 1e-8f, 2.9802322e-8f,
                           5.9604645e-8f, 8.940697e-8f, 6.1035156e-5f, 6.1e-5f, 3.3895314e38f, 3.4028235e38f,
                           std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity()};
  // Every float16 value and the midpoints between neighbours (the ties), and random floats.
  for (uint32_t b = 0; b < 0x7C00; ++b) {
    const float v = static_cast<float>(Float16::from_bits(static_cast<uint16_t>(b)));
    const float next = static_cast<float>(Float16::from_bits(static_cast<uint16_t>(b + 1)));
    xs.push_back(v);
    xs.push_back(-v);
    if (std::isfinite(next)) xs.push_back(static_cast<float>((static_cast<double>(v) + next) / 2));
  }
  for (uint32_t b = 0; b < 0x7F80; b += 7) {  // bfloat16 ties
    const float v = static_cast<float>(BFloat16::from_bits(static_cast<uint16_t>(b)));
    const float next = static_cast<float>(BFloat16::from_bits(static_cast<uint16_t>(b + 1)));
    if (std::isfinite(next)) xs.push_back(static_cast<float>((static_cast<double>(v) + next) / 2));
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t bits = rng();
    const float f = std::bit_cast<float>(bits);
    if (!std::isnan(f)) xs.push_back(f);
  }
  return xs;
}

TEST(StorageDtypes, Float16RoundsToNearestEven) {
  for (float x : conversion_inputs())
    ASSERT_EQ(Float16(x).bits, (nearest_bits<Float16>(x, 0x7BFF, 0x7C00))) << "x = " << x;
  EXPECT_TRUE(std::isnan(static_cast<float>(Float16(std::nanf("")))));
  EXPECT_EQ(Float16(std::nanf("")).bits & 0x7C00, 0x7C00);
}

TEST(StorageDtypes, BFloat16RoundsToNearestEven) {
  for (float x : conversion_inputs())
    ASSERT_EQ(BFloat16(x).bits, (nearest_bits<BFloat16>(x, 0x7F7F, 0x7F80))) << "x = " << x;
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(-std::nanf("")))));
}

TEST(StorageDtypes, EveryHalfWidensExactlyAndRoundTrips) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto h = Float16::from_bits(static_cast<uint16_t>(b));
    const auto bf = BFloat16::from_bits(static_cast<uint16_t>(b));
    const float f = static_cast<float>(h), g = static_cast<float>(bf);
    if (std::isnan(f)) EXPECT_EQ(b & 0x7C00, 0x7C00u);
    else ASSERT_EQ(Float16(f).bits, b) << std::hex << b;
    if (!std::isnan(g)) ASSERT_EQ(BFloat16(g).bits, b) << std::hex << b;
  }
  // The widened values are the formats' definitions.
  EXPECT_EQ(static_cast<float>(Float16::from_bits(0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(static_cast<float>(Float16::from_bits(0x3C01)), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(static_cast<float>(BFloat16::from_bits(0x3F81)), 1.0f + std::ldexp(1.0f, -7));
}

Tensor u8(std::vector<uint8_t> v) { return ag::constant(v); }

TEST(StorageDtypes, EightBitIntegersWrapAsTheirCTypes) {
  const Tensor a = u8({200, 100, 0, 255}), b = u8({100, 200, 1, 255});
  EXPECT_EQ(a.dtype(), ag::uint8);
  EXPECT_EQ((a + b).dtype(), ag::uint8);
  EXPECT_EQ((a + b).to_vector<int>(), (std::vector<int>{44, 44, 1, 254}));
  EXPECT_EQ((a - b).to_vector<int>(), (std::vector<int>{100, 156, 255, 0}));
  EXPECT_EQ((a * b).to_vector<int>(), (std::vector<int>{uint8_t(200 * 100), uint8_t(100 * 200), 0, 1}));
  EXPECT_EQ((a > b).to_vector<int>(), (std::vector<int>{1, 0, 0, 0}));  // unsigned order
  EXPECT_EQ((a / 3).to_vector<int>(), (std::vector<int>{66, 33, 0, 85}));
  EXPECT_EQ((-a).to_vector<int>(), (std::vector<int>{56, 156, 0, 1}));
  EXPECT_EQ(ag::reduce_sum(a).item<int>(), (200 + 100 + 0 + 255) % 256);
  EXPECT_EQ(ag::reduce_max(a).item<int>(), 255);
  EXPECT_EQ(ag::argmax(a).item<int64_t>(), 3);
  EXPECT_EQ(ag::argmax(a).dtype(), ag::int64);

  const Tensor c = ag::constant(std::vector<int8_t>{-128, 127, -7, 5});
  EXPECT_EQ(c.dtype(), ag::int8);
  EXPECT_EQ((c + 1).to_vector<int>(), (std::vector<int>{-127, -128, -6, 6}));
  EXPECT_EQ((c / -1).to_vector<int>(), (std::vector<int>{-128, -127, 7, -5}));  // -128 / -1 wraps, no trap
  EXPECT_EQ(ag::floordiv(c, 2).to_vector<int>(), (std::vector<int>{-64, 63, -4, 2}));
  EXPECT_EQ(ag::abs(c).to_vector<int>(), (std::vector<int>{-128, 127, 7, 5}));
  EXPECT_EQ(ag::cast(c, ag::uint8).to_vector<int>(), (std::vector<int>{128, 127, 249, 5}));
}

TEST(StorageDtypes, CastsSaturateAndRound) {
  const Tensor f = ag::constant(std::vector<float>{300.f, -5.f, 254.5f, 255.5f, NAN, 1e10f, -0.f, 127.6f});
  EXPECT_EQ(ag::cast(f, ag::uint8).to_vector<int>(), (std::vector<int>{255, 0, 254, 255, 0, 255, 0, 127}));
  EXPECT_EQ(ag::cast(f, ag::int8).to_vector<int>(), (std::vector<int>{127, -5, 127, 127, 0, 127, 0, 127}));
  const Tensor h = ag::cast(f, ag::float16);
  EXPECT_EQ(h.dtype(), ag::float16);
  const auto hv = h.to_vector<float>();
  EXPECT_EQ(hv[0], 300.f);
  EXPECT_EQ(hv[5], INFINITY);
  EXPECT_TRUE(std::isnan(hv[4]));
  EXPECT_EQ(hv[7], 127.625f);  // 127.6 to the nearest 1/8
  EXPECT_EQ(ag::cast(ag::constant(1e10), ag::bfloat16).item<double>(), static_cast<double>(static_cast<float>(BFloat16(1e10f))));
  // float64 -> float16 goes through float32, as Eigen's and NumPy's half do.
  EXPECT_EQ(ag::cast(ag::constant(0.1), ag::float16).item<float>(), static_cast<float>(Float16(0.1f)));
  EXPECT_EQ(ag::cast(ag::cast(u8({0, 7, 255}), ag::float16), ag::int32).to_vector<int>(), (std::vector<int>{0, 7, 255}));
  EXPECT_EQ(ag::cast(ag::constant(std::vector<bool>{true, false}), ag::bfloat16).to_vector<float>(), (std::vector<float>{1, 0}));
}

TEST(StorageDtypes, SixteenBitFloatsComputeInFloat32AndRoundEachResult) {
  const Tensor one = ag::cast(ag::constant(1.0f), ag::float16);
  const Tensor tiny = ag::cast(ag::constant(std::ldexp(1.0f, -11)), ag::float16);  // half an ulp of 1
  EXPECT_EQ((one + tiny).dtype(), ag::float16);
  EXPECT_EQ((one + tiny).item<float>(), 1.0f);  // a tie, to even
  EXPECT_EQ(((one + tiny) + tiny).item<float>(), 1.0f);  // rounded after each op, as TensorFlow does
  EXPECT_EQ((one + (tiny + tiny)).item<float>(), 1.0f + std::ldexp(1.0f, -10));

  const Tensor x = ag::constant(std::vector<float>{0.3f, -1.7f, 2.5f, 4.0f});
  for (ag::DType d : {ag::float16, ag::bfloat16}) {
    const Tensor xh = ag::cast(x, d);
    const Tensor widened = ag::cast(xh, ag::float32);
    auto rounded = [&](const Tensor& t) { return ag::cast(ag::cast(t, d), ag::float32).to_vector<float>(); };
    EXPECT_EQ(ag::cast(ag::exp(xh), ag::float32).to_vector<float>(), rounded(ag::exp(widened)));
    EXPECT_EQ(ag::cast(ag::tanh(xh) * xh - 1, ag::float32).to_vector<float>(),
              rounded(ag::cast(ag::cast(ag::cast(ag::cast(ag::tanh(widened), d), ag::float32) * widened, d), ag::float32) - 1));
    EXPECT_EQ(ag::cast(ag::reduce_sum(xh), ag::float32).item<float>(), rounded(ag::reduce_sum(widened))[0]);
    EXPECT_EQ(ag::exp(xh).dtype(), d);
    EXPECT_EQ(ag::argmax(xh).item<int64_t>(), 3);
    EXPECT_EQ(ag::where(xh > 0, xh, ag::zeros_like(xh)).dtype(), d);

    const Tensor a = ag::reshape(xh, {2, 2});
    EXPECT_EQ(ag::matmul(a, a).dtype(), d);
    EXPECT_EQ(ag::cast(ag::matmul(a, a), ag::float32).to_vector<float>(),
              rounded(ag::matmul(ag::reshape(widened, {2, 2}), ag::reshape(widened, {2, 2}))));
  }
}

TEST(StorageDtypes, ConvolutionsAndPoolingAcceptSixteenBitFloats) {
  std::vector<float> img(1 * 5 * 5 * 2), filt(3 * 3 * 2 * 3);
  for (size_t i = 0; i < img.size(); ++i) img[i] = static_cast<float>((i * 37) % 11) / 4 - 1;
  for (size_t i = 0; i < filt.size(); ++i) filt[i] = static_cast<float>((i * 13) % 7) / 8 - 0.4f;
  const Tensor x = ag::cast(ag::constant(img, {1, 5, 5, 2}), ag::float16);
  const Tensor w = ag::cast(ag::constant(filt, {3, 3, 2, 3}), ag::float16);
  const Tensor y = ag::nn::conv2d(x, w, 1, "SAME");
  EXPECT_EQ(y.dtype(), ag::float16);
  const Tensor ref = ag::cast(ag::nn::conv2d(ag::cast(x, ag::float32), ag::cast(w, ag::float32), 1, "SAME"), ag::float16);
  EXPECT_EQ(ag::cast(y, ag::float32).to_vector<float>(), ag::cast(ref, ag::float32).to_vector<float>());
  EXPECT_EQ(ag::nn::max_pool2d(x, 2, 2, "VALID").dtype(), ag::float16);
}

TEST(StorageDtypes, ErrorsNameTheDtypeAndTheFix) {
  const Tensor img = u8({1, 2, 3, 4});
  agtest::expect_error<ag::TypeError>([&] { ag::matmul(ag::reshape(img, {2, 2}), ag::reshape(img, {2, 2})); },
                                      {"ag::matmul", "uint8", "ag::cast"});
  agtest::expect_error<ag::TypeError>([&] { ag::nn::conv2d(ag::reshape(img, {1, 2, 2, 1}), ag::reshape(img, {1, 1, 1, 4}), 1, "SAME"); },
                                      {"ag::nn::conv2d", "uint8", "ag::cast(x, ag::float32)"});
  agtest::expect_error<ag::TypeError>([&] { ag::sqrt(img); }, {"ag::sqrt", "uint8"});
  agtest::expect_error<ag::ValueError>([&] { img + 256; }, {"256", "does not fit the uint8 tensor"});
  agtest::expect_error<ag::ValueError>([&] { img - (-1); }, {"-1", "uint8"});
  agtest::expect_error<ag::TypeError>([&] { img + 0.5; }, {"uint8", "floating-point"});
  agtest::expect_error<ag::TypeError>([&] { img + ag::constant(std::vector<int8_t>{1, 2, 3, 4}); }, {"uint8", "int8"});
  ag::Variable v(ag::cast(ag::constant(std::vector<float>{1, 2}), ag::float16));
  agtest::expect_error<ag::TypeError>([&] { v.assign_add(v.value()); }, {"float16", "only stored", "v.assign(v + x)"});
  v.assign(v.value() + v.value());
  EXPECT_EQ(v.value().to_vector<float>(), (std::vector<float>{2, 4}));
  agtest::expect_error<ag::TypeError>([&] { ag::gather(ag::constant(std::vector<float>{1, 2}), ag::cast(img, ag::uint8)); },
                                      {"indices must be int32 or int64", "uint8"});
}

TEST(StorageDtypes, DataPrintingAndGraphText) {
  const Tensor img = ag::constant(std::vector<uint8_t>{0, 128, 255}, {3});
  EXPECT_EQ(img.data<uint8_t>()[2], 255);
  agtest::expect_error<ag::TypeError>([&] { img.data<int32_t>(); }, {"uint8", "data<uint8_t>()"});
  const Tensor h = ag::cast(ag::constant(std::vector<float>{0.1f, -2.5f, 65504.f}), ag::float16);
  EXPECT_EQ(h.data<Float16>()[0].bits, Float16(0.1f).bits);
  EXPECT_EQ(ag::detail::format_values(h), "[0.1 -2.5 65500]");
  EXPECT_EQ(ag::detail::format_values(img), "[0 128 255]");
  EXPECT_EQ(ag::detail::format_values(ag::cast(ag::constant(std::vector<float>{1.f / 3}), ag::bfloat16)), "[0.334]");
  EXPECT_NE(h.str().find("float16"), std::string::npos) << h.str();

  // A traced graph with storage-dtype constants and inputs reads back from its text.
  auto f = ag::function([](Tensor x) { return ag::cast(x, ag::float16) * ag::cast(ag::constant(0.1f), ag::float16); },
                        {.jit_compile = false});
  const Tensor y = f(img);
  const ag::Graph& traced = f.get_concrete_function(img).graph();
  const std::string text = ag::graph_to_text(traced, ag::ConstantText::Full);
  EXPECT_NE(text.find("u8[3]"), std::string::npos) << text;
  EXPECT_NE(text.find("f16[3]"), std::string::npos) << text;
  const ag::Graph g = ag::graph_from_text(text);
  EXPECT_EQ(ag::graph_to_text(g, ag::ConstantText::Full), text);
  EXPECT_EQ(ag::interpret(g, std::vector<Tensor>{img})[0].to_vector<float>(), y.to_vector<float>());
  EXPECT_EQ(y.to_vector<float>(), ag::cast(ag::cast(img, ag::float16) * ag::cast(ag::constant(0.1f), ag::float16), ag::float32).to_vector<float>());
}

TEST(StorageDtypes, GradientsFlowThroughTheWideningCasts) {
  const Tensor x = ag::cast(ag::constant(std::vector<float>{0.5f, -1.25f, 3.f}), ag::float16);
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = ag::reduce_sum(x * x * 3);
  const Tensor g = tape.gradient(y, x);
  ASSERT_EQ(g.dtype(), ag::float16);
  EXPECT_EQ(g.to_vector<float>(), (std::vector<float>{3.f, -7.5f, 18.f}));

  // The same inside a Function, with a bfloat16 Variable read by reference.
  ag::Variable w(ag::cast(ag::constant(std::vector<float>{1.5f, -2.f}), ag::bfloat16));
  auto step = ag::function([&](Tensor in) {
    ag::GradientTape t;
    const Tensor loss = ag::reduce_sum(ag::tanh(w.value() * in));
    return t.gradient(loss, w);
  }, {.jit_compile = false});
  const Tensor in = ag::cast(ag::constant(std::vector<float>{0.25f, 1.f}), ag::bfloat16);
  const Tensor gw = step(in);
  ASSERT_EQ(gw.dtype(), ag::bfloat16);
  const Tensor wf = ag::cast(w.value(), ag::float32), inf = ag::cast(in, ag::float32);
  const auto expected = ag::cast(ag::cast((1 - ag::square(ag::tanh(wf * inf))) * inf, ag::bfloat16), ag::float32).to_vector<float>();
  const auto got = ag::cast(gw, ag::float32).to_vector<float>();
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], std::abs(expected[i]) * 0.02) << i;
}

}  // namespace
