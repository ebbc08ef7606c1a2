// Bad input at run time, one test per row of docs/reliability.md's table: each raises a named
// ag:: error that says what and where, crashes nothing, and leaves the Function usable (the
// next good call reuses the compiled code). The disk-cache rows are in disk_cache_test.cpp, the
// out-of-memory rows in out_of_memory_test.cpp; leaks are checked by ./test.sh --asan.
#include <string>

#include "jit_test_util.h"

namespace {

using ag::Tensor;

TEST(JitBadInput, WrongDtypeAndWrongRankAgainstTheInputSignature) {
  auto f = ag::function([](Tensor x) { return ag::reduce_sum(x * 2.0f); },
                        {.input_signature = {ag::TensorSpec({-1}, ag::float32, "x")}, .name = "scaled_sum"});
  EXPECT_FLOAT_EQ(f(ag::constant({1.0f, 2.0f})).item<float>(), 6.0f);
  agtest::expect_raises<ag::TypeError>(f, {"scaled_sum", "'x'", "int32", "float32"}, ag::constant({1, 2}));
  agtest::expect_raises<ag::ValueError>(f, {"scaled_sum", "'x'", "shape"}, ag::ones({2, 2}));
  EXPECT_FLOAT_EQ(f(ag::constant({1.0f, 2.0f, 3.0f})).item<float>(), 12.0f);
  EXPECT_EQ(f.tracing_count(), 1);
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
}

int gather_line = 0;
// A gather whose index is computed in a staged loop: out of range only for some inputs.
Tensor gather_in_a_loop(Tensor table, Tensor n) {
  Tensor i = 0, acc = ag::zeros({}, ag::float32);
  ag::while_stmt([&] { return i < n; },
                 [&] {
                   gather_line = __LINE__ + 1;
                   acc = acc + ag::gather(table, i * 2);
                   i += 1;
                 },
                 ag::state(i, acc), {"i", "acc"}, AG_SOURCE_LOC("bad_input_test.cpp", 1));
  return acc;
}

TEST(JitBadInput, AnOutOfRangeIndexComputedInAStagedLoop) {
  auto f = ag::function(gather_in_a_loop);
  const Tensor table = ag::constant({1.0f, 2.0f, 3.0f, 4.0f, 5.0f});
  EXPECT_FLOAT_EQ(f(table, Tensor(3)).item<float>(), 1.0f + 3.0f + 5.0f);
  agtest::expect_invalid_argument(f, {"ag::gather", "index 6", "bad_input_test.cpp:" + std::to_string(gather_line)},
                                  table, Tensor(4));
  EXPECT_FLOAT_EQ(f(table, Tensor(2)).item<float>(), 1.0f + 3.0f);
  EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1);
}

// Zero-size tensors are not errors: every op handles them, as eagerly.
std::tuple<Tensor, Tensor, Tensor, Tensor> with_empty(Tensor x, Tensor w) {
  return {ag::tanh(x) * 2.0f + 1.0f, ag::reduce_sum(x, 0), ag::reduce_max(x, 0), ag::matmul(x, w)};
}

TEST(JitBadInput, ZeroSizeTensorsGiveTheEagerResults) {
  for (const int64_t rows : {int64_t{0}, int64_t{3}})
    agtest::expect_three_way("rows=" + std::to_string(rows), with_empty, {}, ag::ones({rows, 4}), ag::ones({4, 2}));
  agtest::expect_three_way("k=0 matmul", [](Tensor a, Tensor b) { return ag::matmul(a, b); }, {}, ag::ones({3, 0}),
                           ag::ones({0, 2}));
}

}  // namespace
