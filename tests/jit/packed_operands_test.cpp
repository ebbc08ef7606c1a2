// A product in a staged loop whose B operand stays the same through the loop (an RNN's weights)
// has B packed once before the loop (matmul_forms.h, lower_control.cpp); each iteration's GEMM
// reads the panels (KernelSet::gemm_packed_b_*). The packed products are Eigen's own, so the
// compiled loop gives the eager bits on one thread and two; checked with floats and doubles,
// either operand transposed, under tapes inside and outside the trace, in a nested Function,
// with one tensor as both weights, in a loop inside another; and where nothing is packed: a
// weight that the loop changes, unknown shapes. The IR shows which products read packed panels.
#include "ag/detail/kernel_set.h"
#include "ag/detail/parallel.h"
#include "jit_test_util.h"
#include "test_data.h"
#include "../common/scoped_env.h"

namespace {

using ag::Tensor;
using agtest::sample;
using agtest::Values;

#define LOC(line) AG_SOURCE_LOC("packed_operands.cpp", line)

const agtest::Tol kExact{.rtol = 0, .atol = 0};

std::string ir_of(auto& f, const auto&... args) { return f.get_concrete_function(args...).llvm_ir(false); }

// h = (x_t W + h U) / 2 for each step t of xs [steps, batch, in] from h: additions and halvings
// round as the eager ops do, so only the products could tell compiled code from eager code.
Tensor recur_from(Tensor h, Tensor xs, Tensor w, Tensor u, ag::SourceLoc loc) {
  const Tensor steps = ag::gather(ag::shape_of(xs), 0);
  Tensor t = int64_t{0};
  ag::while_stmt([&] { return t < steps; },
                 [&] {
                   h = (ag::matmul(ag::gather(xs, t), w) + ag::matmul(h, u)) * 0.5;
                   t += 1;
                 },
                 ag::state(h, t), {"h", "t"}, loc);
  return h;
}

Tensor recur(Tensor xs, Tensor w, Tensor u) {
  return recur_from(ag::zeros({xs.shape()[1], u.shape()[0]}, xs.dtype()), xs, w, u, LOC(1));
}

// The same with W stored [out, in] and U [hidden, hidden] read transposed, and x_t read
// transposed from xs [steps, in, batch].
Tensor recur_transposed(Tensor xs, Tensor w, Tensor u) {
  Tensor h = ag::zeros({xs.shape()[2], u.shape()[0]}, xs.dtype());
  const Tensor steps = ag::gather(ag::shape_of(xs), 0);
  Tensor t = int64_t{0};
  ag::while_stmt([&] { return t < steps; },
                 [&] {
                   h = (ag::matmul(ag::gather(xs, t), w, true, true) + ag::matmul(h, u, false, true)) * 0.5;
                   t += 1;
                 },
                 ag::state(h, t), {"h", "t"}, LOC(2));
  return h;
}

struct Sizes {
  int64_t steps, batch, in, hidden;
};

Tensor data(ag::DType d, ag::Shape shape, uint64_t seed, double scale) {
  return ag::cast(sample(ag::float32, shape, seed, Values::Moderate) * static_cast<float>(scale), d);
}

bool reads_packed_panels(const std::string& ir) {
  return agtest::ir_calls(ir, "agc_rt_gemm_pack_b") && agtest::ir_calls(ir, "agc_rt_gemm_packed_b_");
}

// The products of one call of `f` that read packed panels (not a fallback to the plain GEMM).
int64_t packed_products_of_a_call(auto& f, const auto&... args) {
  (void)f(args...);  // compiled first
  const int64_t before = ag::detail::gemm_packed_b_products();
  (void)f(args...);
  return ag::detail::gemm_packed_b_products() - before;
}

// Small gates (49K and 65K multiply-adds, whole on any thread count) and an LSTM's (1M and 2M:
// in halves on two threads).
TEST(PackedGemmOperands, AnRnnsWeightsArePackedBeforeItsLoopAndGiveTheEagerBits) {
  for (const Sizes z : {Sizes{4, 16, 48, 64}, Sizes{3, 32, 64, 512}})
    for (ag::DType d : {ag::float32, ag::float64})
      for (int threads : {1, 2}) {
        ag::detail::ScopedNumThreads th(threads);
        const std::string what = fmt::format("{} {}x{}x{}, {} threads", ag::dtype_name(d), z.batch, z.in, z.hidden, threads);
        const Tensor xs = data(d, {z.steps, z.batch, z.in}, 1, 1.0), w = data(d, {z.in, z.hidden}, 2, 0.2),
                     u = data(d, {z.hidden, z.hidden}, 3, 0.1);
        agtest::expect_three_way(what, recur, kExact, xs, w, u);
        const Tensor xst = data(d, {z.steps, z.in, z.batch}, 4, 1.0), wt = data(d, {z.hidden, z.in}, 5, 0.2);
        agtest::expect_three_way(what + ", transposed", recur_transposed, kExact, xst, wt, u);
        auto f = ag::function(recur), ft = ag::function(recur_transposed);
        EXPECT_TRUE(reads_packed_panels(ir_of(f, xs, w, u))) << what;
        EXPECT_TRUE(reads_packed_panels(ir_of(ft, xst, wt, u))) << what << ", transposed";
        EXPECT_EQ(packed_products_of_a_call(f, xs, w, u), 2 * z.steps) << what;
        EXPECT_EQ(packed_products_of_a_call(ft, xst, wt, u), 2 * z.steps) << what << ", transposed";
      }
}

// AG_DUMP's plan (`.fused.graph.txt`) marks the two products.
TEST(PackedGemmOperands, ThePlanDumpMarksThePackedProducts) {
  const Tensor xs = data(ag::float32, {4, 16, 48}, 1, 1.0), w = data(ag::float32, {48, 64}, 2, 0.2),
               u = data(ag::float32, {64, 64}, 3, 0.1);
  const std::string plan = agtest::fused_plan(recur, {}, xs, w, u);
  EXPECT_EQ(agtest::occurrences(plan, "B packed before the loop"), 2) << plan;
  const agtest::ScopedEnv off("AG_JIT_PACK_WEIGHTS", "0");
  EXPECT_EQ(agtest::occurrences(agtest::fused_plan(recur, {}, xs, w, u), "B packed before the loop"), 0);
}

// A loop of no iteration packs and multiplies nothing it should not: h stays zero.
TEST(PackedGemmOperands, ALoopOfNoIterationGivesItsInitialState) {
  const Tensor xs = data(ag::float32, {0, 16, 48}, 1, 1.0), w = data(ag::float32, {48, 64}, 2, 0.2),
               u = data(ag::float32, {64, 64}, 3, 0.1);
  agtest::expect_three_way("no step", recur, kExact, xs, w, u);
}

// A staged loop inside a staged loop: the inner loop's weights are packed before the inner loop,
// in every outer iteration (the outer loop changes h0, not the weights).
Tensor recur_twice(Tensor xs, Tensor w, Tensor u, Tensor rounds) {
  Tensor h = ag::zeros({xs.shape()[1], u.shape()[0]}, xs.dtype());
  Tensor r = int64_t{0};
  ag::while_stmt([&] { return r < rounds; },
                 [&] {
                   h = recur_from(h, xs, w, u, LOC(5)) + 0.25;
                   r += 1;
                 },
                 ag::state(h, r), {"h", "r"}, LOC(6));
  return h;
}

TEST(PackedGemmOperands, AStagedLoopInsideAnother) {
  const Tensor xs = data(ag::float32, {3, 16, 48}, 18, 1.0), w = data(ag::float32, {48, 64}, 19, 0.2),
               u = data(ag::float32, {64, 64}, 20, 0.1), rounds(int64_t{4});
  agtest::expect_three_way("nested loops", recur_twice, kExact, xs, w, u, rounds);
  auto f = ag::function(recur_twice);
  EXPECT_TRUE(reads_packed_panels(ir_of(f, xs, w, u, rounds)));
  EXPECT_EQ(packed_products_of_a_call(f, xs, w, u, rounds), 4 * 3 * 2);
}

// One tensor as both weights (in == hidden), and the loop in a Function that another calls.
TEST(PackedGemmOperands, OneTensorAsBothWeightsAndANestedFunction) {
  const Tensor xs = data(ag::float64, {5, 16, 64}, 6, 1.0), w = data(ag::float64, {64, 64}, 7, 0.2);
  agtest::expect_three_way("w twice", recur, kExact, xs, w, w);
  auto inner = ag::function(recur);
  auto outer = [inner](Tensor x, Tensor a, Tensor b) mutable { return inner(x, a, b) * 2.0; };
  agtest::expect_three_way("nested", outer, kExact, xs, w, data(ag::float64, {64, 64}, 8, 0.1));
  auto f = ag::function(outer);
  EXPECT_TRUE(reads_packed_panels(ir_of(f, xs, w, w)));
  EXPECT_EQ(packed_products_of_a_call(f, xs, w, w), 2 * 5);
}

// Gradients of a loss through the loop: a tape inside the trace (its backward loop multiplies by
// U transposed, U again the same through that loop) and outside it (the Function's gradient).
Tensor loss_and_grads(Tensor xs, Tensor w, Tensor u) {
  ag::GradientTape tape;
  tape.watch(w);
  tape.watch(u);
  const Tensor loss = ag::reduce_sum(ag::square(recur(xs, w, u)));
  const std::vector<Tensor> g = tape.gradient(loss, {w, u});
  return ag::reduce_sum(g[0]) + ag::reduce_sum(ag::square(g[1])) + loss;
}

TEST(PackedGemmOperands, GradientsThroughTheLoopUnderTapesInsideAndOutsideTheTrace) {
  const agtest::Tol tol{.rtol = 1e-9, .atol = 1e-12};
  const Tensor xs = data(ag::float64, {4, 16, 48}, 9, 1.0), w = data(ag::float64, {48, 64}, 10, 0.2),
               u = data(ag::float64, {64, 64}, 11, 0.1);
  agtest::expect_three_way("tape inside", loss_and_grads, tol, xs, w, u);
  auto f = ag::function(loss_and_grads);
  const std::string ir = ir_of(f, xs, w, u);
  EXPECT_TRUE(reads_packed_panels(ir));
  EXPECT_TRUE(agtest::ir_calls(ir, "agc_rt_gemm_packed_b_f64"));
  // Forward: 2 products a step; backward: h's gradient through U, a step each but the first.
  EXPECT_GE(packed_products_of_a_call(f, xs, w, u), 2 * 4 + 3);

  auto loss = ag::function([](Tensor x, Tensor a, Tensor b) { return ag::reduce_sum(ag::square(recur(x, a, b))); });
  ag::GradientTape eager_tape;
  eager_tape.watch(w);
  eager_tape.watch(u);
  const Tensor eager_loss = ag::reduce_sum(ag::square(recur(xs, w, u)));
  const std::vector<Tensor> want = eager_tape.gradient(eager_loss, {w, u});
  ag::GradientTape tape;
  tape.watch(w);
  tape.watch(u);
  const Tensor through_function = loss(xs, w, u);
  const std::vector<Tensor> got = tape.gradient(through_function, {w, u});
  EXPECT_TRUE(agtest::same_tensor(eager_loss, through_function, tol));
  EXPECT_TRUE(agtest::same_tensor(want[0], got[0], tol)) << "d/dw, tape outside";
  EXPECT_TRUE(agtest::same_tensor(want[1], got[1], tol)) << "d/du, tape outside";
}

// A weight the loop changes is a loop variable: read as it is, nothing packed. Nor with a batch
// known only at run time (the GEMM's shapes are not static).
Tensor decay(Tensor xs, Tensor w) {
  Tensor h = ag::zeros({xs.shape()[1], w.shape()[1]}, xs.dtype());
  Tensor t = int64_t{0};
  const Tensor steps = ag::gather(ag::shape_of(xs), 0);
  ag::while_stmt([&] { return t < steps; },
                 [&] {
                   h = h + ag::matmul(ag::gather(xs, t), w);
                   w = w * 0.5f;
                   t += 1;
                 },
                 ag::state(h, w, t), {"h", "w", "t"}, LOC(3));
  return h;
}

// recur for a batch known only at run time: h starts as the first step's input product times 0.
Tensor recur_any_batch(Tensor xs, Tensor w, Tensor u) {
  return recur_from(ag::matmul(ag::gather(xs, 0), w) * 0.0f, xs, w, u, LOC(4));
}

TEST(PackedGemmOperands, NotAWeightTheLoopChangesNorShapesKnownOnlyAtRunTime) {
  const Tensor xs = data(ag::float32, {4, 16, 48}, 12, 1.0), w = data(ag::float32, {48, 64}, 13, 0.2),
               u = data(ag::float32, {64, 64}, 14, 0.1);
  agtest::expect_three_way("changing weight", decay, kExact, xs, w);
  auto f = ag::function(decay);
  const std::string ir = ir_of(f, xs, w);
  EXPECT_FALSE(agtest::ir_calls(ir, "agc_rt_gemm_pack_b"));
  EXPECT_TRUE(agtest::ir_calls(ir, "agc_rt_gemm_f32"));
  EXPECT_EQ(packed_products_of_a_call(f, xs, w), 0);

  const ag::FunctionOptions unknown_batch{.input_signature = {ag::TensorSpec({4, -1, 48}, ag::float32),
                                                              ag::TensorSpec({48, 64}, ag::float32),
                                                              ag::TensorSpec({64, 64}, ag::float32)}};
  agtest::expect_three_way_with("unknown batch", recur_any_batch, unknown_batch, kExact, xs, w, u);
  auto g = ag::function(recur_any_batch, unknown_batch);
  EXPECT_FALSE(agtest::ir_calls(ir_of(g, xs, w, u), "agc_rt_gemm_pack_b"));
}

// AG_JIT_PACK_WEIGHTS=0: every product packs its B itself, with the same bits.
TEST(PackedGemmOperands, OffWithAgJitPackWeights0) {
  const Tensor xs = data(ag::float32, {4, 16, 48}, 15, 1.0), w = data(ag::float32, {48, 64}, 16, 0.2),
               u = data(ag::float32, {64, 64}, 17, 0.1);
  const agtest::ScopedEnv off("AG_JIT_PACK_WEIGHTS", "0");
  agtest::expect_three_way("unpacked", recur, kExact, xs, w, u);
  auto f = ag::function(recur);
  EXPECT_FALSE(agtest::ir_calls(ir_of(f, xs, w, u), "agc_rt_gemm_pack_b"));
  EXPECT_EQ(packed_products_of_a_call(f, xs, w, u), 0);
}

}  // namespace
