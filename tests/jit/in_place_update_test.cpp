// x.at(...).set(v) in place in compiled code (plan.cpp, update_in_place): a stencil's loop
// variable updated every iteration without a copy of the grid (its update is a view of the
// loop's state in the plan), temporaries updated in place, and every case where it must not be:
// an argument, a value read after the update, an update value that aliases x. Each three-way.
#include "jit_test_util.h"
#include "test_data.h"

namespace {

using ag::Slice;
using ag::Tensor;
using ag::TensorSpec;
using agtest::sample;
using agtest::Values;

// A Jacobi heat step on the interior, `steps` times, in a staged loop.
Tensor heat(Tensor u, Tensor steps) {
  auto [i, grid] = ag::while_loop(
      [&](const Tensor& i, const Tensor&) { return i < steps; },
      [](const Tensor& i, const Tensor& g) {
        const Tensor center = g(Slice{1, -1}, Slice{1, -1});
        const Tensor laplacian = g(Slice{ag::none, -2}, Slice{1, -1}) + g(Slice{2}, Slice{1, -1}) +
                                 g(Slice{1, -1}, Slice{ag::none, -2}) + g(Slice{1, -1}, Slice{2}) - center * 4.0f;
        return std::make_tuple(i + 1, g.at(Slice{1, -1}, Slice{1, -1}).set(center + laplacian * 0.2f));
      },
      std::make_tuple(ag::constant(0), u));
  return grid;
}

// The plan line of the first SliceUpdate.
std::string update_line(const std::string& plan) { return agtest::plan_line(plan, "SliceUpdate"); }

// How many lines of `plan` define a node of `op`, and how many of those are views.
std::pair<int, int> count_views(const std::string& plan, const std::string& op) {
  int nodes = 0, views = 0;
  for (size_t at = plan.find(" = " + op + "("); at != std::string::npos; at = plan.find(" = " + op + "(", at + 1)) {
    const std::string line = plan.substr(at, plan.find('\n', at) - at);
    ++nodes;
    views += line.find("view of %") != std::string::npos;
  }
  return {nodes, views};
}

TEST(JitInPlaceUpdate, AStencilsLoopVariableIsUpdatedWithoutACopy) {
  const Tensor u = sample(ag::float32, {12, 10}, 1, Values::Moderate);
  const Tensor steps = ag::constant(7);
  // An odd and an even number of steps (the state ends in either of the loop's buffers), none.
  for (int n : {7, 8, 0, 1})
    agtest::expect_three_way("heat, " + std::to_string(n) + " steps", heat, {.rtol = 1e-5, .atol = 1e-5}, u, ag::constant(n));
  const std::string plan = agtest::fused_plan(heat, {}, u, steps);
  ASSERT_FALSE(plan.empty());
  // Static dims: the stencil reads one of the loop's two buffers and writes its new interior
  // straight into the other (the update's value a box of the update), which the loop then
  // takes as its state (plan_updates.h).
  EXPECT_NE(update_line(plan).find("[dest 1]"), std::string::npos) << plan;
  EXPECT_NE(plan.find("[box of %"), std::string::npos) << plan;
  EXPECT_NE(agtest::plan_line(plan, "While").find("twin"), std::string::npos) << plan;
  // The five shifted reads are read in place by the update value's loop: no slice is copied.
  EXPECT_EQ(count_views(plan, "Slice"), std::make_pair(5, 5)) << plan;
  // With the grid's dims known only at run time (the loop's owned state buffer): in place.
  const ag::FunctionOptions dynamic{.input_signature = {TensorSpec({-1, -1}, ag::float32), TensorSpec({}, ag::int32)}};
  agtest::expect_three_way_with("heat, dynamic dims", heat, dynamic, {.rtol = 1e-5, .atol = 1e-5}, u, steps);
  EXPECT_NE(update_line(agtest::fused_plan(heat, dynamic, u, steps)).find("view of %"), std::string::npos);
  // And under a tape outside the trace: the loop's gradient reads what the updates overwrote.
  auto gradient = [&](auto&& f) {
    ag::GradientTape tape;
    tape.watch(u);
    const Tensor loss = ag::reduce_sum(ag::square(f(u, steps)));
    return std::make_tuple(loss, tape.gradient(loss, u));
  };
  const auto eager = gradient(heat);
  auto interp = ag::function(heat, {.jit_compile = false});
  auto jit = ag::function(heat);
  agtest::expect_same(eager, gradient(interp), {.rtol = 1e-4, .atol = 1e-5}, "interpreter");
  agtest::expect_same(eager, gradient(jit), {.rtol = 1e-4, .atol = 1e-5}, "jit");
}

TEST(JitInPlaceUpdate, TemporariesChainInPlaceAndArgumentsAreNeverWritten) {
  auto f = [](Tensor x) {
    Tensor y = x * 2.0f;
    y = y.at(0).set(ag::constant(std::vector<float>{-1, -2, -3}));
    y = y.at(Slice{1}, 1).add(10.0f);
    const Tensor z = x.at(1).set(ag::zeros({3}));  // x is the caller's: copied
    return std::make_tuple(y, z);
  };
  const Tensor x = sample(ag::float32, {3, 3}, 2, Values::Moderate);
  const std::vector<float> before = x.to_vector<float>();
  agtest::expect_three_way("chained updates", f, {}, x);
  auto jit = ag::function(f);
  jit(x);
  EXPECT_EQ(x.to_vector<float>(), before);
  const std::string plan = agtest::fused_plan(f, {}, x);
  size_t views = 0;
  for (size_t at = plan.find("SliceUpdate("); at != std::string::npos; at = plan.find("SliceUpdate(", at + 1)) {
    const size_t end = plan.find('\n', at);
    views += plan.substr(at, end - at).find("view of %") != std::string::npos;
  }
  EXPECT_EQ(views, 2u) << plan;  // y's two updates; x's is a copy
}

TEST(JitInPlaceUpdate, NotInPlaceWhenXIsReadAfterwardsOrAliasesTheValue) {
  auto read_after = [](Tensor x) {
    const Tensor t = x + 1.0f;
    const Tensor u = t.at(0).set(ag::zeros({4}));
    return u + t;  // t is read after its update: the update copies
  };
  auto aliasing = [](Tensor x) {
    const Tensor t = x * 3.0f;
    return t.at(Slice{1}).set(ag::reshape(t, {4, 4})(Slice{ag::none, 3}));  // t's rows 0..2 into rows 1..3
  };
  const Tensor x = sample(ag::float32, {4, 4}, 3, Values::Moderate);
  agtest::expect_three_way("read after", read_after, {}, x);
  agtest::expect_three_way("aliasing", aliasing, {}, x);
  EXPECT_EQ(update_line(agtest::fused_plan(read_after, {}, x)).find("view of %"), std::string::npos);

  // A loop variable read after its update in the body is copied too.
  auto loop = [](Tensor g) {
    auto [i, out, old] = ag::while_loop(
        [](const Tensor& i, const Tensor&, const Tensor&) { return i < 3; },
        [](const Tensor& i, const Tensor& a, const Tensor&) {
          return std::make_tuple(i + 1, a.at(0).set(a[1] + 1.0f), a * 2.0f);
        },
        std::make_tuple(ag::constant(0), g, g));
    return std::make_tuple(out, old);
  };
  agtest::expect_three_way("loop read after", loop, {}, x);
}

TEST(JitInPlaceUpdate, SlicesReadByLoopsAreViewsAndOthersCopies) {
  auto f = [](Tensor x, Tensor w) {
    // (Starts and negative stops only: the forms a dim known only at run time allows.)
    const Tensor a = x(Slice{1, -1}, Slice{2});                               // read by an elementwise op: a view
    const Tensor b = ag::reduce_sum(x(Slice{ag::none, -2}, Slice{1, -2}), 1);  // by a reduction: a view
    const Tensor c = ag::matmul(x(Slice{0, -3}), w);                          // by a matmul: a copy
    const Tensor d = ag::reshape(x, {5, 2, 3})(Slice{1, -2}, Slice{1});       // of a reshape view, by exp: a view
    const Tensor empty = x(Slice{3, -3}) + 1.0f;  // [3:-3] of 5 rows: empty, as NumPy's
    return std::make_tuple(ag::tanh(a) * 2.0f, b, c, ag::exp(d), x(Slice{2, -1}), empty);  // x(2:-1) is a result: a copy
  };
  const Tensor x = sample(ag::float32, {5, 6}, 7, Values::Moderate), w = sample(ag::float32, {6, 3}, 8, Values::Moderate);
  agtest::expect_three_way("slices", f, {.rtol = 1e-5, .atol = 1e-6}, x, w);
  EXPECT_EQ(count_views(agtest::fused_plan(f, {}, x, w), "Slice"), std::make_pair(6, 4));
  const ag::FunctionOptions dynamic{.input_signature = {TensorSpec({-1, -1}, ag::float32), TensorSpec({-1, 3}, ag::float32)}};
  agtest::expect_three_way_with("slices, dynamic dims", f, dynamic, {.rtol = 1e-5, .atol = 1e-6}, x, w);
  EXPECT_EQ(count_views(agtest::fused_plan(f, dynamic, x, w), "Slice"), std::make_pair(6, 4));
}

// A slice of an update made in place is a view of x's buffer, and that buffer stays x's while
// the slice is read: here by fused loops computed after later values took arena buffers
// (plan.cpp, reroot_views). The slice named the update as its root, the update became a view of
// x afterwards, and x's buffer went to `p` while the concatenation's loops still read it
// (random graphs 4016..4019 in the long mode).
TEST(JitInPlaceUpdate, SlicesOfAnUpdateKeepItsBufferAliveUntilRead) {
  auto f = [](Tensor a, Tensor b) {
    const Tensor x = ag::tanh(b) + ag::zeros({3, 4});
    const Tensor u = x.at(Slice{1}).set(a(Slice{0, -1}) * 0.5f);
    const Tensor left = ag::slice(u, {0, 0}, {3, 1}), right = ag::slice(u, {0, 1}, {3, 3});
    const Tensor p = ag::atan(a * 3.0f), q = ag::exp(p) + a;
    return ag::concat({left - ag::slice(p, {0, 0}, {3, 1}), right - ag::slice(q, {0, 1}, {3, 3})}, 1);
  };
  const Tensor a = sample(ag::float32, {3, 4}, 11, Values::Moderate), b = sample(ag::float32, {4}, 12, Values::Moderate);
  agtest::expect_three_way("slices of an update", f, {.rtol = 1e-5, .atol = 1e-6}, a, b);
  const std::string plan = agtest::fused_plan(f, {}, a, b);
  EXPECT_NE(update_line(plan).find("view of %"), std::string::npos) << plan;  // the update is in place
}

}  // namespace
