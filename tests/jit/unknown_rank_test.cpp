// Values of unknown rank (TensorFlow's TensorShape(None)): a concrete function traced from an
// unknown-rank TensorSpec serves tensors of every rank, and a staged if whose branches give a
// variable different ranks gives it an unknown rank. Ops whose result follows from such inputs
// (elementwise ops, a reduction of everything, reshape, shape_of, ensure_shape) keep working;
// ops that need the rank raise ValueError naming the op and the line. Such graphs run on the
// interpreter (compiled code is specialized to ranks), which the tests check by the backend
// that ran and by the log line. Eager == interpreter == "JIT" throughout.
#include "function/concrete.h"
#include "jit_test_util.h"
#include "../runtime/test_util.h"

namespace {

using ag::Tensor;

Tensor affine_total(Tensor x) { return ag::reduce_sum(x * 2.f + 1.f) + ag::cast(ag::shape_of(x)[0] * 0, ag::float32); }

// `x` kept (rank 2) or summed over its rows (rank 1), by a tensor condition: the branches give
// `y` different ranks.
Tensor keep_or_sum(Tensor x, Tensor keep) {
  Tensor y;
  ag::if_stmt(keep, [&] { y = x; }, [&] { y = ag::reduce_sum(x, 0); }, ag::state(y), {"y"},
              AG_SOURCE_LOC("keep_or_sum.cpp", 4));
  return ag::reduce_sum(ag::exp(y) * 0.5f);
}

std::string backend_of(const std::shared_ptr<ag::detail::ConcreteCore>& core) {
  const ag::Executable* e = core->compiled_if_ready();
  return e ? std::string(e->backend_name()) : std::string("<not compiled>");
}

TEST(UnknownRank, AConcreteFunctionOfAnUnknownRankSpecServesEveryRank) {
  const std::vector<Tensor> xs = {ag::constant(3.f), ag::constant({1.f, 2.f, 3.f}),
                                  ag::reshape(ag::range(0.f, 12.f, 1.f), {2, 3, 2})};
  // affine_total indexes shape_of(x)[0]: not for scalars; the scalar case uses a plain affine.
  auto affine = [](Tensor x) { return ag::reduce_sum(x * 2.f + 1.f); };
  for (bool jit : {false, true}) {
    agtest::LogCapture log;
    auto f = ag::function(affine, {.jit_compile = jit ? std::optional<bool>() : std::optional<bool>(false)});
    auto cf = f.get_concrete_function(ag::TensorSpec::unknown_rank(ag::float32));
    EXPECT_NE(cf.graph_text().find("f32[*]"), std::string::npos) << cf.graph_text();
    for (const Tensor& x : xs) {
      EXPECT_TRUE(agtest::same_tensor(affine(x), cf(x))) << x.str();
      EXPECT_TRUE(agtest::same_tensor(affine(x), f(x))) << "a call of the Function reuses the trace: " << x.str();
    }
    EXPECT_EQ(f.tracing_count(), 1) << "one trace serves every rank (TensorFlow's)";
    EXPECT_EQ(backend_of(cf.core()), "interpreter");
    if (jit && ag::jit_available())
      EXPECT_EQ(log.count_containing("runs on the graph interpreter: value %0 (f32[*]"), 1u) << "not a silent fallback";
  }
  // An op reading the run-time shape works too.
  auto g = ag::function(affine_total);
  auto cg = g.get_concrete_function(ag::TensorSpec::unknown_rank(ag::float32));
  for (size_t k = 1; k < xs.size(); ++k) EXPECT_TRUE(agtest::same_tensor(affine_total(xs[k]), cg(xs[k])));
  EXPECT_NE(cg.signature().find("shape=None"), std::string::npos) << cg.signature();
}

TEST(UnknownRank, AnOpThatNeedsTheRankRaisesNamingItAndTheLine) {
  bool saw_unknown = false;
  auto f = ag::function([&](Tensor x) -> Tensor {
    saw_unknown = x.has_unknown_rank();
    EXPECT_THROW((void)x.shape(), ag::ValueError);
    return ag::transpose(x);
  });
  try {
    f.get_concrete_function(ag::TensorSpec::unknown_rank(ag::float32));
    ADD_FAILURE() << "no error";
  } catch (const ag::ValueError& e) {
    const std::string m = e.what();
    for (const char* needle : {"ag::transpose", "known rank", "float32[*]", "unknown_rank_test.cpp:", "ag::ensure_shape"})
      EXPECT_NE(m.find(needle), std::string::npos) << m << " lacks " << needle;
  }
  EXPECT_TRUE(saw_unknown);
  // A reduction along an axis needs the rank; keepdims of everything too.
  auto along = ag::function([](Tensor x) { return ag::reduce_max(x, 1); });
  EXPECT_THROW(along.get_concrete_function(ag::TensorSpec::unknown_rank(ag::float32)), ag::ValueError);
}

TEST(UnknownRank, EnsureShapeGivesTheRankAndChecksAtRunTime) {
  auto rows = [](Tensor x) { return ag::reduce_sum(ag::ensure_shape(x, {-1, 3}), 1); };
  const Tensor good = ag::reshape(ag::range(0.f, 6.f, 1.f), {2, 3});
  for (bool jit : {false, true}) {
    auto f = ag::function(rows, {.jit_compile = jit ? std::optional<bool>() : std::optional<bool>(false)});
    auto cf = f.get_concrete_function(ag::TensorSpec::unknown_rank(ag::float32));
    EXPECT_NE(cf.graph_text().find("EnsureShape"), std::string::npos);
    EXPECT_TRUE(agtest::same_tensor(rows(good), cf(good)));
    agtest::expect_invalid_argument(cf, {"ag::ensure_shape", "has shape [3]", "cannot have shape [?,3]"},
                                    ag::constant({1.f, 2.f, 3.f}));
  }
  // With known ranks the check is compiled: a wrong dim at run time, a static misfit at trace time.
  auto g = ag::function(rows, {.input_signature = {{ag::TensorSpec({-1, -1}, ag::float32)}}});
  EXPECT_TRUE(agtest::same_tensor(rows(good), g(good)));
  if (ag::jit_available()) EXPECT_EQ(backend_of(g.get_concrete_function(good).core()), "jit");
  agtest::expect_invalid_argument(g, {"ag::ensure_shape", "dim 1 of the tensor has size 2", "expected shape [?,3]"},
                                  ag::zeros({3, 2}));
  EXPECT_THROW(rows(ag::zeros({3, 2})), ag::ValueError) << "eagerly every shape is static: a ValueError, as a reshape's";
  auto h = ag::function(rows);
  EXPECT_THROW(h(ag::zeros({4})), ag::ValueError) << "rank 1 cannot be [?,3]: a trace-time error";
}

TEST(UnknownRank, BranchesOfDifferentRanksGiveAnUnknownRank) {
  const Tensor x = ag::constant({{0.1f, 0.2f, 0.3f}, {-1.f, 0.5f, 2.f}});
  for (bool keep : {true, false}) {
    agtest::expect_three_way(keep ? "keep" : "sum", keep_or_sum, {}, x, Tensor(keep));
  }
  auto f = ag::function(keep_or_sum);
  auto cf = f.get_concrete_function(x, Tensor(true));
  EXPECT_NE(cf.graph_text().find("f32[*]"), std::string::npos) << cf.graph_text();
  EXPECT_FLOAT_EQ(f(x, Tensor(false)).item<float>(), keep_or_sum(x, Tensor(false)).item<float>());
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(backend_of(cf.core()), "interpreter");
  // jit_compile = true cannot be honoured: an error that names the value, not a silent fallback.
  if (ag::jit_available()) {
    auto strict = ag::function(keep_or_sum, {.jit_compile = true});
    agtest::expect_raises<ag::UnimplementedError>(strict, {"unknown rank", "keep_or_sum.cpp:4", "ag::ensure_shape"}, x,
                                                  Tensor(true));
  }
  // A rank-needing op on the joined value names the line that uses it.
  auto transposed = ag::function([](Tensor x, Tensor keep) {
    Tensor y;
    ag::if_stmt(keep, [&] { y = x; }, [&] { y = ag::reduce_sum(x, 0); }, ag::state(y), {"y"},
                AG_SOURCE_LOC("t.cpp", 2));
    return ag::expand_dims(y, 0);
  });
  agtest::expect_raises<ag::ValueError>(transposed, {"ag::expand_dims", "unknown_rank_test.cpp:", "known rank"}, x,
                                        Tensor(true));
}

// Under a tape, a call of an unknown-rank graph is differentiated op by op on the concrete values
// (the gradient rules read static shapes); outside the trace and inside another Function.
TEST(UnknownRank, GradientsThroughAnUnknownRankCall) {
  const Tensor x = ag::constant({{0.1f, 0.2f, 0.3f}, {-1.f, 0.5f, 2.f}});
  auto f = ag::function(keep_or_sum);
  for (bool keep : {true, false}) {
    auto gradient = [&](auto&& fn) {
      ag::GradientTape tape;
      tape.watch(x);
      return tape.gradient(fn(x, Tensor(keep)), x);
    };
    const Tensor expected = gradient(keep_or_sum);
    EXPECT_TRUE(agtest::same_tensor(expected, gradient(f))) << keep;
    // Inside a trace the rules see symbolic values: where one needs a rank it cannot have, an
    // error names the op and the line (never a wrong gradient).
    auto outer = ag::function([&](Tensor v) {
      ag::GradientTape tape;
      tape.watch(v);
      return tape.gradient(f(v, Tensor(keep)), v);
    });
    agtest::expect_raises<ag::UnimplementedError>(outer, {"the gradient of ag::reshape (at unknown_rank_test.cpp:", "unknown rank",
                                                          "ag::ensure_shape"},
                                                  x);
  }
  // ensure_shape gives the rank back, and the gradient inside the trace with it.
  auto pinned = [](Tensor x, Tensor keep) {
    Tensor y;
    ag::if_stmt(keep, [&] { y = x; }, [&] { y = ag::reduce_sum(x, 0); }, ag::state(y), {"y"},
                AG_SOURCE_LOC("pinned.cpp", 2));
    return ag::reduce_sum(ag::exp(ag::ensure_shape(y, {-1})) * 0.5f);
  };
  auto outer = ag::function([&](Tensor v, Tensor keep) {
    ag::GradientTape tape;
    tape.watch(v);
    return tape.gradient(pinned(v, keep), v);
  });
  const Tensor v = ag::constant({{0.5f, -1.f, 2.f}, {1.f, 0.f, -2.f}});
  ag::GradientTape tape;
  tape.watch(v);
  EXPECT_TRUE(agtest::same_tensor(tape.gradient(pinned(v, Tensor(false)), v), outer(v, Tensor(false))));
}

// A loop carrying a value of unknown rank keeps it unknown; reshape gives it a rank back.
TEST(UnknownRank, AStagedLoopCarriesAnUnknownRank) {
  auto doubled = [](Tensor x, Tensor n) {
    Tensor i = 0;
    ag::while_stmt([&] { return i < n; },
                   [&] {
                     x = x * 2.f;
                     i += 1;
                   },
                   ag::state(x, i), {"x", "i"}, AG_SOURCE_LOC("doubled.cpp", 2));
    return ag::reshape(x, {-1});
  };
  auto f = ag::function(doubled);
  auto cf = f.get_concrete_function(ag::TensorSpec::unknown_rank(ag::float32), ag::TensorSpec({}, ag::int32));
  const Tensor x = ag::ones({2, 2});
  EXPECT_TRUE(agtest::same_tensor(doubled(x, Tensor(3)), cf(x, Tensor(3))));
  EXPECT_TRUE(agtest::same_tensor(doubled(ag::constant(1.5f), Tensor(2)), cf(ag::constant(1.5f), Tensor(2))));
  EXPECT_NE(cf.graph_text().find("f32[?]"), std::string::npos) << "reshape's result has a rank: " << cf.graph_text();
}

}  // namespace
