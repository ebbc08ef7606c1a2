// Chains of small products r = matmul(x, r) (the TF guide's `power`, unrolled at trace time)
// compile as one loop over the kernel (Emitter::lower_matmul_chain): the IR calls the kernel
// once, not once per product. Values eager == interpreter == JIT, for either operand
// order, chain lengths around the threshold and both parities, and chains the loop must not
// take whole (a product also used elsewhere, the last product a result or an operand of more).
// Chains with x on the left whose rows leave vector lanes empty run the packed kernel
// (lower_matmul_packed.cpp): x packed once by the runtime, several rows per vector.
#include "jit_test_util.h"

namespace {

using ag::Tensor;

// Calls of the small matmul kernel in the unoptimized IR.
int kernel_calls(const std::string& ir) {
  int calls = 0;
  for (size_t pos = 0; (pos = ir.find("call void @agc.gemm.", pos)) != std::string::npos; ++pos) ++calls;
  return calls;
}

template <class F>
int kernel_calls_of(F fn, const Tensor& x) {
  auto f = ag::function(fn);
  return kernel_calls(f.get_concrete_function(x).llvm_ir(false));
}

Tensor power_left(const Tensor& x, int n) {
  Tensor r = ag::eye(x.shape()[0], x.dtype());
  for (int i = 0; i < n; ++i) r = ag::matmul(x, r);
  return r;
}

Tensor power_right(const Tensor& x, int n) {
  Tensor r = ag::eye(x.shape()[0], x.dtype());
  for (int i = 0; i < n; ++i) r = ag::matmul(r, x);
  return r;
}

Tensor chain_left(const Tensor& x, const Tensor& r0, int n) {
  Tensor r = r0;
  for (int i = 0; i < n; ++i) r = ag::matmul(x, r);
  return r;
}

TEST(JitMatMulChain, AHundredProductsCallTheKernelOnce) {
  const Tensor x = ag::random_uniform({10, 10}, ag::int32, -2, 3, 1);
  EXPECT_EQ(kernel_calls_of([](Tensor v) { return power_left(v, 100); }, x), 1);
  EXPECT_EQ(kernel_calls_of([](Tensor v) { return power_right(v, 100); }, x), 1);
  // Below the threshold the products stay straight-line calls.
  EXPECT_EQ(kernel_calls_of([](Tensor v) { return power_left(v, 7); }, x), 7);
}

TEST(JitMatMulChain, ValuesMatchForEveryLengthOrderAndDtype) {
  const Tensor xi = ag::random_uniform({10, 10}, ag::int32, -2, 3, 2);
  const Tensor xf = ag::random_uniform({6, 6}, ag::float32, -0.5, 0.5, 3);
  for (int n : {7, 8, 9, 10, 31, 100}) {
    agtest::expect_three_way(fmt::format("x^{} r (int32)", n), [n](Tensor v) { return power_left(v, n); }, {}, xi);
    agtest::expect_three_way(fmt::format("r x^{} (int32)", n), [n](Tensor v) { return power_right(v, n); }, {}, xi);
    agtest::expect_three_way(fmt::format("x^{} r (float32)", n), [n](Tensor v) { return power_left(v, n); },
                             {.rtol = 1e-4, .atol = 1e-6}, xf);
  }
}

// Two columns fill no level's vectors (2 of 4, 8 or 16 lanes): every level packs x, whose rows
// then share vectors, for integers and floats. x on the right keeps the row kernel.
TEST(JitMatMulChain, NarrowRowsUseThePackedKernel) {
  const Tensor x = ag::random_uniform({8, 8}, ag::int32, -2, 3, 6);
  const Tensor r0 = ag::random_uniform({8, 2}, ag::int32, -2, 3, 7);
  auto ir_of = [](auto fn, const Tensor& a, const Tensor& b) {
    auto f = ag::function(fn);
    return f.get_concrete_function(a, b).llvm_ir(false);
  };
  auto left = [](Tensor v, Tensor r) { return chain_left(v, r, 20); };
  const std::string ir = ir_of(left, x, r0);
  EXPECT_NE(ir.find("call void @agc_rt_pack_gemm_lhs"), std::string::npos) << ir;
  EXPECT_NE(ir.find("call void @agc.gemm.packed.i32.8x8x2"), std::string::npos) << ir;
  EXPECT_NE(ir_of(left, ag::cast(x, ag::float32), ag::cast(r0, ag::float32)).find("call void @agc.gemm.packed.f32.8x8x2"),
            std::string::npos);
  // r = r @ x: B is the fixed operand, and the row kernel runs.
  const std::string right = ir_of(
      [](Tensor v, Tensor r) {
        for (int i = 0; i < 20; ++i) r = ag::matmul(r, v);
        return r;
      },
      ag::random_uniform({2, 2}, ag::int32, -2, 3, 8), ag::random_uniform({8, 2}, ag::int32, -2, 3, 9));
  EXPECT_EQ(right.find("agc.gemm.packed"), std::string::npos);
  EXPECT_NE(right.find("call void @agc.gemm.i32.8x2x2"), std::string::npos) << right;
}

// Every segment shape: widths 1..8 and whole registers, a last vector with rows missing, every
// dtype. Integers are exact against eager and the interpreter (they wrap the same way
// everywhere); floats within the tolerance of Eigen's other summation order.
TEST(JitMatMulChain, PackedKernelValuesMatchForEveryShape) {
  for (const ag::DType d : {ag::int32, ag::int64, ag::float32, ag::float64})
    for (int64_t m : {1, 3, 7, 10, 12})
      for (int64_t n : {1, 2, 3, 5, 9, 10, 13, 20, 24}) {
        const bool fp = d == ag::float32 || d == ag::float64;
        const uint64_t seed = static_cast<uint64_t>(m * 100 + n);
        const Tensor x = fp ? ag::cast(ag::random_uniform({m, m}, ag::float32, -0.4, 0.4, seed), d)
                            : ag::random_uniform({m, m}, d, -3, 4, seed);
        const Tensor r0 = fp ? ag::cast(ag::random_uniform({m, n}, ag::float32, -1, 1, seed + 1), d)
                             : ag::random_uniform({m, n}, d, -3, 4, seed + 1);
        agtest::expect_three_way(fmt::format("x[{0},{0}]^9 r[{0},{1}] ({2})", m, n, ag::dtype_name(d)),
                                 [](Tensor v, Tensor r) { return chain_left(v, r, 9); },
                                 {.rtol = 1e-4, .atol = 1e-6}, x, r0);
      }
}

TEST(JitMatMulChain, ProductsUsedElsewhereStayCorrect) {
  const Tensor x = ag::random_uniform({8, 8}, ag::int64, -2, 3, 4);
  // The 12th product is also a result: the chain stops before it and starts again after it.
  agtest::expect_three_way(
      "a product in the middle returned",
      [](Tensor v) {
        Tensor r = ag::eye(8, ag::int64), kept;
        for (int i = 0; i < 30; ++i) {
          r = ag::matmul(v, r);
          if (i == 11) kept = r;
        }
        return std::tuple<Tensor, Tensor>{r, kept};
      },
      {}, x);
  // The last product feeds two more ops; the chain's first operand is a parameter.
  agtest::expect_three_way(
      "the last product used twice",
      [](Tensor v, Tensor r0) {
        Tensor r = r0;
        for (int i = 0; i < 20; ++i) r = ag::matmul(v, r);
        return r + ag::reduce_sum(r);
      },
      {}, x, ag::random_uniform({8, 3}, ag::int64, -1, 2, 5));
  // The first product is also a result: it keeps its own buffer while the loop goes on.
  agtest::expect_three_way(
      "the first product returned",
      [](Tensor v) {
        Tensor r = ag::matmul(v, ag::eye(8, ag::int64));
        const Tensor first = r;
        for (int i = 0; i < 15; ++i) r = ag::matmul(v, r);
        return std::tuple<Tensor, Tensor>{r, first * 2};
      },
      {}, x);
  // A chain inside a staged loop's body.
  agtest::expect_three_way(
      "a chain in a while body",
      [](Tensor v) {
        Tensor r = ag::eye(8, ag::int64);
        Tensor i = ag::constant(int64_t{0});
        ag::while_stmt([&] { return i < 3; },
                       [&] {
                         for (int k = 0; k < 9; ++k) r = ag::matmul(v, r);
                         i = i + 1;
                       },
                       ag::state(r, i), {"r", "i"}, AG_SOURCE_LOC("matmul_chain_test.cpp", 80));
        return r;
      },
      {}, x);
}

}  // namespace
