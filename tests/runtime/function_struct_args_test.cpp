// Struct parameters and results (JAX's pytrees): reflection of plain structs, flattened
// signatures named by field, retracing per field, input_signature per leaf, results, trees, and
// eager == graph interpreter (tests/jit/struct_args_test.cpp adds the JIT and gradients).
#include <array>
#include <string>
#include <vector>

#include "ag/detail/log.h"
#include "test_util.h"

namespace {

using ag::Tensor;
using ag::TensorSpec;

struct Dense {
  Tensor w, b;
};
struct Mlp {
  Dense l1;
  Dense l2;
  float leak = 0.1f;  // a plain field: part of the signature by value
};
struct WithContainers {
  std::array<Tensor, 2> pair;
  std::vector<Tensor> rest;
  std::vector<int> ks;
  std::string act;
};
namespace inner {
struct Named {
  Tensor alpha;
  int beta_count;
};
}  // namespace inner

Tensor leaky(Tensor x, float leak) { return ag::maximum(x, x * leak); }

Tensor mlp_forward(const Mlp& p, Tensor x) {
  Tensor h = leaky(ag::matmul(x, p.l1.w) + p.l1.b, p.leak);
  return ag::matmul(h, p.l2.w) + p.l2.b;
}

Mlp make_mlp(int64_t in, int64_t hidden, int64_t out, uint64_t seed) {
  return {{ag::random_normal({in, hidden}, ag::float32, 0, 0.5, seed), ag::random_uniform({hidden}, ag::float32, -1, 1, seed + 1)},
          {ag::random_normal({hidden, out}, ag::float32, 0, 0.5, seed + 2), ag::random_uniform({out}, ag::float32, -1, 1, seed + 3)},
          0.1f};
}

// The retrace log lines `body` writes, as one text.
std::string retrace_log(const std::function<void()>& body) {
  agtest::LogCapture logs(static_cast<unsigned>(ag::detail::LogTopic::Retrace));
  body();
  std::string all;
  for (const auto& l : logs.lines()) all += l + "\n";
  return all;
}

// Same dtype, shape and values (within a float rounding: the interpreter's kernels are the
// eager ones, so they agree bit for bit in practice).
::testing::AssertionResult same_values(const Tensor& expected, const Tensor& actual) {
  if (expected.dtype() != actual.dtype() || !(expected.shape() == actual.shape()))
    return ::testing::AssertionFailure() << actual.str() << " vs expected " << expected.str();
  const auto e = expected.to_vector<double>(), a = actual.to_vector<double>();
  for (size_t i = 0; i < e.size(); ++i)
    if (std::abs(e[i] - a[i]) > 1e-6 * (1 + std::abs(e[i])))
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs expected " << e[i];
  return ::testing::AssertionSuccess();
}

TEST(Reflect, CountsTypesAndNamesFieldsOfPlainStructs) {
  namespace r = ag::detail::reflect;
  static_assert(r::field_count_v<Dense> == 2);
  static_assert(r::field_count_v<Mlp> == 3);
  static_assert(r::field_count_v<WithContainers> == 4);
  static_assert(std::is_same_v<r::field_type<Mlp, 1>, Dense>);
  static_assert(std::is_same_v<r::field_type<WithContainers, 2>, std::vector<int>>);
  EXPECT_EQ((r::field_name<Mlp, 0>()), "l1");
  EXPECT_EQ((r::field_name<Mlp, 2>()), "leak");
  EXPECT_EQ((r::field_name<WithContainers, 3>()), "act");
  EXPECT_EQ((r::field_name<inner::Named, 0>()), "alpha");
  EXPECT_EQ((r::field_name<inner::Named, 1>()), "beta_count");
  static_assert(ag::detail::leaf_count<Mlp>() == 5);
  static_assert(ag::detail::leaf_count<WithContainers>() == 4);
}

TEST(StructArgs, SignatureFlattensFieldsWithTheirNames) {
  auto f = ag::function(mlp_forward, {.jit_compile = false, .param_names = {"params", "x"}});
  const Mlp p = make_mlp(3, 4, 2, 1);
  const Tensor x = ag::random_uniform({5, 3}, ag::float32, -1, 1, 9);
  EXPECT_TRUE(same_values(mlp_forward(p, x), f(p, x)));
  const std::string sig = f.pretty_printed_concrete_signatures();
  EXPECT_NE(sig.find("params.l1.w: TensorSpec(shape=(3, 4), dtype=float32)"), std::string::npos) << sig;
  EXPECT_NE(sig.find("params.l2.b: TensorSpec(shape=(2,), dtype=float32)"), std::string::npos) << sig;
  EXPECT_NE(sig.find("params.leak: float = 0.1"), std::string::npos) << sig;
  EXPECT_NE(sig.find("x: TensorSpec(shape=(5, 3)"), std::string::npos) << sig;
  // The graph takes one parameter per tensor leaf, named by its field.
  const std::string graph = f.get_concrete_function(p, x).graph_text();
  EXPECT_NE(graph.find("graph "), std::string::npos);
  EXPECT_EQ(f.tracing_count(), 1);
}

TEST(StructArgs, UnnamedParametersAreArgN) {
  auto f = ag::function([](const Dense& d, Tensor x) { return x * d.w + d.b; }, {.jit_compile = false});
  f(Dense{ag::ones({2}), ag::zeros({2})}, ag::ones({2}));
  const std::string sig = f.pretty_printed_concrete_signatures();
  EXPECT_NE(sig.find("arg0.w: TensorSpec(shape=(2,)"), std::string::npos) << sig;
  EXPECT_NE(sig.find("arg1: TensorSpec"), std::string::npos) << sig;
}

TEST(StructArgs, AFieldsNewShapeRetracesAndTheLogNamesTheField) {
  auto f = ag::function(mlp_forward, {.jit_compile = false, .param_names = {"params", "x"}});
  const Tensor x = ag::random_uniform({5, 3}, ag::float32, -1, 1, 9);
  const Mlp p = make_mlp(3, 4, 2, 1);
  const Mlp wider = make_mlp(3, 6, 2, 1);
  const std::string all = retrace_log([&] {
    f(p, x);
    f(p, x);  // same signature: no trace
    EXPECT_TRUE(same_values(mlp_forward(wider, x), f(wider, x)));
  });
  EXPECT_EQ(f.tracing_count(), 2);
  EXPECT_NE(all.find("arg 0 'params.l1.w': shape [3,4] -> [3,6]"), std::string::npos) << all;
  EXPECT_NE(all.find("arg 0 'params.l2.w': shape [4,2] -> [6,2]"), std::string::npos) << all;
  // A plain field is part of the signature by value.
  Mlp leakier = p;
  leakier.leak = 0.2f;
  const std::string text = retrace_log([&] { EXPECT_TRUE(same_values(mlp_forward(leakier, x), f(leakier, x))); });
  EXPECT_EQ(f.tracing_count(), 3);
  EXPECT_NE(text.find("'params.leak': value 0.1 -> 0.2"), std::string::npos) << text;
}

TEST(StructArgs, InputSignatureTakesOneSpecPerTensorLeafAndErrorsNameTheField) {
  const std::vector<TensorSpec> specs = {TensorSpec({3, -1}, ag::float32), TensorSpec({-1}, ag::float32),
                                         TensorSpec({-1, 2}, ag::float32), TensorSpec({2}, ag::float32),
                                         TensorSpec({-1, 3}, ag::float32)};
  auto f = ag::function(mlp_forward, {.input_signature = specs, .jit_compile = false, .param_names = {"params", "x"}});
  for (int64_t hidden : {2, 7}) {
    const Mlp p = make_mlp(3, hidden, 2, static_cast<uint64_t>(hidden));
    const Tensor x = ag::random_uniform({hidden, 3}, ag::float32, -1, 1, 5);
    EXPECT_TRUE(same_values(mlp_forward(p, x), f(p, x)));
  }
  EXPECT_EQ(f.tracing_count(), 1);
  Mlp bad = make_mlp(3, 4, 2, 3);
  bad.l2.b = ag::zeros({3});
  AG_EXPECT_ERROR(ag::ValueError, f(bad, ag::ones({1, 3})), "argument 0 'params.l2.b'", "TensorSpec(shape=(2,)");
  bad.l2.b = ag::zeros({2}, ag::float64);
  AG_EXPECT_ERROR(ag::TypeError, f(bad, ag::ones({1, 3})), "argument 0 'params.l2.b'", "float64");
  // Four tensor leaves plus x: five specs, not two.
  AG_EXPECT_ERROR(ag::ValueError,
                  ag::function(mlp_forward, {.input_signature = {TensorSpec({-1, -1}, ag::float32),
                                                                 TensorSpec({-1, 3}, ag::float32)}}),
                  "input_signature has 2 TensorSpec(s) but the function takes 5 tensor(s)");
}

TEST(StructArgs, ContainersAndStringsInsideAStruct) {
  auto f = ag::function(
      [](const WithContainers& c) {
        Tensor s = c.pair[0] + c.pair[1];
        for (const Tensor& t : c.rest) s = s + t;
        for (int k : c.ks) s = s * float(k);
        return c.act == "relu" ? ag::relu(s) : s;
      },
      {.jit_compile = false, .param_names = {"c"}});
  WithContainers c{{ag::constant({1.f, -2.f}), ag::constant({0.5f, 0.5f})}, {ag::constant({-3.f, 1.f})}, {2}, "relu"};
  EXPECT_EQ(f(c).to_vector<float>(), (std::vector<float>{0.f, 0.f}));
  c.act = "none";
  EXPECT_EQ(f(c).to_vector<float>(), (std::vector<float>{-3.f, -1.f}));
  c.rest.push_back(ag::constant({10.f, 10.f}));
  EXPECT_EQ(f(c).to_vector<float>(), (std::vector<float>{17.f, 19.f}));
  EXPECT_EQ(f.tracing_count(), 3);
  const std::string sig = f.pretty_printed_concrete_signatures();
  EXPECT_NE(sig.find("c.pair: [TensorSpec(shape=(2,), dtype=float32), TensorSpec(shape=(2,)"), std::string::npos) << sig;
  EXPECT_NE(sig.find("c.ks: std::vector<int> = [2]"), std::string::npos) << sig;
  EXPECT_NE(sig.find("c.act: std::string = \"none\""), std::string::npos) << sig;
}

struct Forward {
  Tensor y;
  Dense cache;
  std::array<Tensor, 2> extra;
};

TEST(StructArgs, StructResultsAndTuplesOfThem) {
  auto f = ag::function(
      [](const Dense& d, Tensor x) {
        const Tensor z = x * d.w;
        return Forward{z + d.b, {z, d.b * 2.f}, {x, -x}};
      },
      {.jit_compile = false});
  const Dense d{ag::constant({2.f, 3.f}), ag::constant({1.f, 1.f})};
  const Tensor x = ag::constant({1.f, -1.f});
  const Forward r = f(d, x);
  EXPECT_EQ(r.y.to_vector<float>(), (std::vector<float>{3.f, -2.f}));
  EXPECT_EQ(r.cache.w.to_vector<float>(), (std::vector<float>{2.f, -3.f}));
  EXPECT_EQ(r.cache.b.to_vector<float>(), (std::vector<float>{2.f, 2.f}));
  EXPECT_EQ(r.extra[1].to_vector<float>(), (std::vector<float>{-1.f, 1.f}));

  auto g = ag::function([](Tensor x) { return std::tuple{x + 1.f, Dense{x * 2.f, x * 3.f}}; }, {.jit_compile = false});
  const auto [a, dense] = g(ag::constant({1.f}));
  EXPECT_EQ(a.item<float>(), 2.f);
  EXPECT_EQ(dense.w.item<float>(), 2.f);
  EXPECT_EQ(dense.b.item<float>(), 3.f);
}

TEST(StructArgs, ConcreteFunctionsTakeTheStruct) {
  auto f = ag::function(mlp_forward, {.jit_compile = false, .param_names = {"params", "x"}});
  const Mlp p = make_mlp(3, 4, 2, 1);
  const Tensor x = ag::random_uniform({5, 3}, ag::float32, -1, 1, 9);
  auto c = f.get_concrete_function(p, TensorSpec({-1, 3}, ag::float32));
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_TRUE(same_values(mlp_forward(p, x), c(p, x)));
  EXPECT_TRUE(same_values(mlp_forward(p, ag::ones({1, 3})), c(p, ag::ones({1, 3}))));
  Mlp other = p;
  other.l1.w = ag::ones({4, 4});
  AG_EXPECT_ERROR(ag::ValueError, c(other, x), "argument 0 'params.l1.w'", "expected (3, 4)");
}

TEST(StructArgs, RunFunctionsEagerlyPassesTheStructAsIs) {
  auto f = ag::function(mlp_forward);
  const Mlp p = make_mlp(3, 4, 2, 1);
  const Tensor x = ag::random_uniform({5, 3}, ag::float32, -1, 1, 9);
  ag::run_functions_eagerly(true);
  const Tensor eager = f(p, x);
  ag::run_functions_eagerly(false);
  EXPECT_EQ(f.tracing_count(), 0);
  EXPECT_TRUE(same_values(mlp_forward(p, x), eager));
}

// A whole struct assigned inside a staged if (what ag-rewrite emits for `if (n > m) g = ...;`)
// is the if's state field by field; a staged while carries a struct the same way.
Dense scale_down(Dense g, Tensor max_norm) {
  const Tensor norm = ag::sqrt(ag::reduce_sum(ag::square(g.w)) + ag::reduce_sum(ag::square(g.b)));
  ag::if_stmt(norm > max_norm, [&] { g = ag::tree_map([&](Tensor t) { return t * (max_norm / norm); }, g); }, [] {},
              ag::state(g), {"g"}, AG_SOURCE_LOC("structs.cpp", 7));
  ag::while_stmt([&] { return ag::reduce_max(g.w) > 1.f; }, [&] { g = Dense{g.w * 0.5f, g.b + 1.f}; },
                 ag::state(g), {"g"}, AG_SOURCE_LOC("structs.cpp", 9));
  return g;
}

TEST(StructArgs, AStructLocalIsTheStateOfStagedControlFlowFieldByField) {
  auto f = ag::function(scale_down, agtest::interpreted());
  for (float limit : {100.f, 3.f, 0.5f}) {
    const Dense g{ag::constant({3.f, 4.f}), ag::constant({0.f, 12.f})};
    const Dense eager = scale_down(g, Tensor(limit));
    const Dense staged = f(g, Tensor(limit));
    EXPECT_TRUE(same_values(eager.w, staged.w)) << limit;
    EXPECT_TRUE(same_values(eager.b, staged.b)) << limit;
  }
  EXPECT_EQ(f.tracing_count(), 1);
  // A number field assigned in a staged construct is a ConversionError naming the field.
  auto bad = ag::function(
      [](Tensor x) {
        inner::Named s{x, 0};
        ag::if_stmt(x > 0, [&] { s = inner::Named{x * 2.f, 1}; }, [] {}, ag::state(s), {"s"},
                    AG_SOURCE_LOC("structs.cpp", 20));
        return s.alpha;
      },
      agtest::interpreted());
  AG_EXPECT_ERROR(ag::ConversionError, bad(Tensor(1.f)), "'s.beta_count'", "structs.cpp:20");
}

TEST(Trees, LeavesUnflattenAndMap) {
  const Mlp p = make_mlp(2, 3, 1, 4);
  const std::vector<Tensor> leaves = ag::tree_leaves(p);
  ASSERT_EQ(leaves.size(), 4u);
  EXPECT_TRUE(same_values(leaves[2], p.l2.w));
  std::vector<Tensor> doubled;
  for (const Tensor& t : leaves) doubled.push_back(t * 2.f);
  const Mlp q = ag::tree_unflatten(p, doubled);
  EXPECT_TRUE(same_values(q.l1.b, p.l1.b * 2.f));
  EXPECT_EQ(q.leak, p.leak);
  const Mlp diff = ag::tree_map([](Tensor a, Tensor b) { return a - b; }, q, p);
  EXPECT_TRUE(same_values(diff.l2.w, p.l2.w));
  AG_EXPECT_ERROR(ag::ValueError, ag::tree_unflatten(p, std::vector<Tensor>(leaves.begin(), leaves.end() - 1)),
                  "fewer tensors");
  doubled.push_back(ag::ones({1}));
  AG_EXPECT_ERROR(ag::ValueError, ag::tree_unflatten(p, doubled), "more tensors");
}

}  // namespace
