// Tensors over external memory: the release hook runs once, agc never writes the memory, and
// buffers aligned only to their elements give plain-loop results eagerly, interpreted and compiled.
#include <ag/eigen.h>

#include <cstring>

#include "interop_test_util.h"

namespace {

using ag::Tensor;
using agtest::Mode;
using agtest::ReleaseCounter;

TEST(ExternalMemory, ReleaseRunsOnceWhenTheLastTensorDies) {
  std::vector<float> buf{1, 2, 3, 4, 5, 6};
  ReleaseCounter released;
  Tensor t = ag::from_external(buf.data(), ag::float32, {2, 3}, ReleaseCounter::hook, &released);
  EXPECT_TRUE(ag::is_external(t));
  Tensor view = ag::reshape(t, {3, 2});
  Tensor row = t[1];
  ag::Variable v(t);
  {
    // A traced function capturing the tensor holds it (its lambda, and a constant of its graph).
    auto f = ag::function([t](Tensor x) { return x + t; }, {.jit_compile = false});
    EXPECT_EQ(f(ag::ones({2, 3})).to_vector<float>(), (std::vector<float>{2, 3, 4, 5, 6, 7}));
    t = Tensor();
    view = Tensor();
    row = Tensor();
    EXPECT_EQ(released.calls.load(), 0);
    v.assign(ag::zeros({2, 3}));  // the Variable lets go of it
    EXPECT_EQ(released.calls.load(), 0);
  }
  EXPECT_EQ(released.calls.load(), 1);
}

TEST(ExternalMemory, BadInputIsAValueErrorAndTheMemoryStaysTheCallers) {
  ReleaseCounter released;
  alignas(8) unsigned char raw[64] = {};
  AG_EXPECT_ERROR(ag::ValueError,
                  ag::from_external(raw + 2, ag::float32, {4}, ReleaseCounter::hook, &released),
                  "ag::from_external", "not aligned to the 4-byte elements of float32");
  AG_EXPECT_ERROR(ag::ValueError, ag::from_external(nullptr, ag::int64, {2}, ReleaseCounter::hook, &released),
                  "null", "[2]");
  AG_EXPECT_ERROR(ag::ValueError, ag::from_external(raw, ag::int32, {-1}, ReleaseCounter::hook, &released),
                  "negative dim");
  EXPECT_EQ(released.calls.load(), 0);
  // An empty tensor needs no data.
  EXPECT_EQ(ag::from_external(nullptr, ag::float32, {0, 3}, nullptr, nullptr).num_elements(), 0);
}

// Every op result is a new buffer, even when the operand is the only tensor viewing external
// memory (the case a buffer-reusing runtime would write in place).
TEST(ExternalMemory, EagerOpsNeverWriteIt) {
  Eigen::VectorXf m = Eigen::VectorXf::LinSpaced(100, 0, 99);
  const Eigen::VectorXf original = m;
  {
    Tensor t = ag::from_eigen(m);
    t += 1;
    t = ag::exp(ag::from_eigen(m));
    t = -ag::from_eigen(m);
    Tensor u = ag::from_eigen(m);
    u *= u;
  }
  EXPECT_EQ(m, original);
}

// A Variable initialized from external memory is its sole holder once the caller's handle is
// gone: compiled assignments, which update a sole-owned value in place, must copy it first.
TEST(ExternalMemory, VariableAssignmentsNeverWriteIt) {
  for (Mode mode : agtest::modes()) {
    SCOPED_TRACE(agtest::mode_name(mode));
    Eigen::VectorXf m = Eigen::VectorXf::Constant(8, 2.f);
    ag::Variable v(ag::from_eigen(m));
    auto step = [&v](Tensor d) {
      v.assign_add(d);
      v.assign_sub(ag::fill({8}, 0.5f));
      return v.value();
    };
    Tensor out;
    if (mode == Mode::Eager) {
      out = step(Tensor(1.f));
      out = step(Tensor(1.f));
    } else {
      auto f = ag::function(step, agtest::options_for(mode));
      f(Tensor(1.f));
      out = f(Tensor(1.f));
    }
    EXPECT_EQ(out.to_vector<float>(), std::vector<float>(8, 3.f));
    EXPECT_EQ(m, Eigen::VectorXf::Constant(8, 2.f));
  }
}

// A staged loop whose carried value starts as an external tensor.
TEST(ExternalMemory, StagedLoopsNeverWriteTheirExternalInput) {
  for (Mode mode : agtest::modes()) {
    if (mode == Mode::Eager) continue;
    SCOPED_TRACE(agtest::mode_name(mode));
    Eigen::VectorXi m = Eigen::VectorXi::LinSpaced(50, 0, 49);
    auto f = ag::function(
        [](Tensor x) {
          auto [i, y] = ag::while_loop([](Tensor i, Tensor) { return i < 3; },
                                       [](Tensor i, Tensor y) { return std::tuple{i + 1, y * 2 + 1}; },
                                       std::tuple{Tensor(0), x});
          return y;
        },
        agtest::options_for(mode));
    Tensor out = f(ag::from_eigen(m));
    for (int k = 0; k < 50; ++k) {
      EXPECT_EQ(m(k), k);
      EXPECT_EQ(out[k].item<int32_t>(), 8 * k + 7);
    }
  }
}

// Buffers aligned to their elements only (offset sizeof(T) from a 64-byte boundary), large
// enough for vector loops, odd row lengths for their tails, and a flat operand large enough
// for the eager kernels' thread pool and the JIT's parallel loops.
template <class T>
void check_misaligned(ag::DType dtype) {
  constexpr int64_t R = 37, C = 129, K = 5, N = 300007;
  agtest::OffsetBuffer<T> xb(R * C, sizeof(T)), wb(C * K, sizeof(T)), bb(N, sizeof(T));
  ASSERT_NE(reinterpret_cast<uintptr_t>(xb.data) % (2 * sizeof(T)), 0u);
  const auto xs = agtest::sample<T>(R * C, 1), ws = agtest::sample<T>(C * K, 2), bs = agtest::sample<T>(N, 3);
  std::memcpy(xb.data, xs.data(), sizeof(T) * xs.size());
  std::memcpy(wb.data, ws.data(), sizeof(T) * ws.size());
  std::memcpy(bb.data, bs.data(), sizeof(T) * bs.size());

  // Plain loops.
  std::vector<T> y(R * C), rowsum(R, 0), mm(R * K, 0), big(N);
  for (int64_t i = 0; i < R * C; ++i) y[i] = xs[i] * 3 + 1;
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j) rowsum[i] += y[i * C + j];
  for (int64_t i = 0; i < R; ++i)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < C; ++j) mm[i * K + k] += xs[i * C + j] * ws[j * K + k];
  for (int64_t i = 0; i < N; ++i) big[i] = bs[i] * bs[i] - bs[i];

  auto body = [](Tensor x, Tensor w, Tensor b) {
    Tensor yy = x * 3 + 1;
    return std::tuple{yy, ag::reduce_sum(yy, 1), ag::matmul(x, w), b * b - b};
  };
  for (Mode mode : agtest::modes()) {
    SCOPED_TRACE(agtest::mode_name(mode));
    Tensor x = ag::from_external(xb.data, dtype, {R, C}, nullptr, nullptr);
    Tensor w = ag::from_external(wb.data, dtype, {C, K}, nullptr, nullptr);
    Tensor b = ag::from_external(bb.data, dtype, {N}, nullptr, nullptr);
    std::tuple<Tensor, Tensor, Tensor, Tensor> out;
    if (mode == Mode::Eager) out = body(x, w, b);
    else out = ag::function(body, agtest::options_for(mode))(x, w, b);
    EXPECT_TRUE(agtest::near_all(y, std::get<0>(out)));
    EXPECT_TRUE(agtest::near_all(rowsum, std::get<1>(out)));
    EXPECT_TRUE(agtest::near_all(mm, std::get<2>(out)));
    EXPECT_TRUE(agtest::near_all(big, std::get<3>(out)));
    // Views of the misaligned buffer at odd offsets (x[i] starts i * C elements in).
    EXPECT_TRUE(agtest::near_all(std::vector<T>(y.begin() + 3 * C, y.begin() + 4 * C), x[3] * 3 + 1));
  }
}

TEST(ExternalMemory, MisalignedFloat32MatchesPlainLoops) { check_misaligned<float>(ag::float32); }
TEST(ExternalMemory, MisalignedFloat64MatchesPlainLoops) { check_misaligned<double>(ag::float64); }
TEST(ExternalMemory, MisalignedInt32MatchesPlainLoops) { check_misaligned<int32_t>(ag::int32); }
TEST(ExternalMemory, MisalignedInt64MatchesPlainLoops) { check_misaligned<int64_t>(ag::int64); }

// Transcendental kernels take Eigen's vector paths (and the JIT its vector math) on misaligned input.
TEST(ExternalMemory, MisalignedTranscendentalsMatchCmath) {
  constexpr int64_t n = 1001;
  agtest::OffsetBuffer<float> xb(n, 4);
  std::vector<float> expected(n);
  for (int64_t i = 0; i < n; ++i) {
    xb.data[i] = static_cast<float>(i - 500) / 97.f;
    expected[i] = std::tanh(std::exp(xb.data[i] / 4));
  }
  for (Mode mode : agtest::modes()) {
    SCOPED_TRACE(agtest::mode_name(mode));
    auto fn = [](Tensor x) { return ag::tanh(ag::exp(x / 4)); };
    Tensor x = ag::from_external(xb.data, ag::float32, {n}, nullptr, nullptr);
    Tensor out = mode == Mode::Eager ? fn(x) : ag::function(fn, agtest::options_for(mode))(x);
    EXPECT_TRUE(agtest::near_all(expected, out, 1e-5));
  }
}

}  // namespace
