// Tensor methods on symbolic tensors (inside a traced ag::function, run by the interpreter):
// they agree with eager execution, and reading a value that does not exist yet is a
// ConversionError that says what to do.
#include <ag/ag.h>

#include "test_util.h"

namespace {

ag::Tensor last_row(ag::Tensor x) { return x[-1] + x[0]; }

TEST(TensorTraced, NegativeIndexCountsFromTheEndAsInEager) {
  const ag::Tensor x = ag::constant({{1, 2}, {3, 4}, {5, 6}});
  const ag::Tensor eager = last_row(x);
  auto f = ag::function(last_row, {.jit_compile = false});
  EXPECT_EQ(f(x).to_vector<int32_t>(), eager.to_vector<int32_t>());
  EXPECT_EQ(eager.to_vector<int32_t>(), (std::vector<int32_t>{6, 8}));
  // With an unknown leading dim, the end is only known at run time.
  auto g = ag::function(last_row, {.input_signature = {ag::TensorSpec({-1, 2}, ag::int32)}, .jit_compile = false});
  EXPECT_EQ(g(x).to_vector<int32_t>(), (std::vector<int32_t>{6, 8}));
  EXPECT_EQ(g(ag::constant({{7, 8}})).to_vector<int32_t>(), (std::vector<int32_t>{14, 16}));
}

TEST(TensorTraced, ReadingASymbolicValueIsAConversionError) {
  auto cond = ag::function(
      [](ag::Tensor x) -> ag::Tensor {
        if (x > 0) return x;  // plain C++ if on a tensor: needs ag-rewrite
        return -x;
      },
      {.jit_compile = false});
  AG_EXPECT_ERROR(ag::ConversionError, cond(ag::Tensor(1.f)), "symbolic", "ag-rewrite");
  auto item = ag::function([](ag::Tensor x) -> ag::Tensor { return ag::Tensor(x.item<float>()); },
                           {.jit_compile = false});
  AG_EXPECT_ERROR(ag::ConversionError, item(ag::Tensor(1.f)), "item()", "symbolic");
  auto loop = ag::function(
      [](ag::Tensor x) -> ag::Tensor {
        ag::Tensor s = 0.f;
        for (ag::Tensor row : x) s += row;
        return s;
      },
      {.jit_compile = false});
  AG_EXPECT_ERROR(ag::ConversionError, loop(ag::constant({1.f, 2.f})), "iterate", "ag-rewrite");
}

}  // namespace
