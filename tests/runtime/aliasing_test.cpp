// Aliasing: views (reshape, x[i], squeeze, expand_dims, gather of one row) share their source's
// buffer; no later op, compound assignment, Variable or TensorArray update may change a tensor
// that is still in use, and no op may write into one of its inputs.
#include "ag/tensor_array.h"
#include "ag/variable.h"
#include "test_util.h"

namespace {

std::vector<float> values(const ag::Tensor& t) { return t.to_vector<float>(); }

TEST(Aliasing, ViewsShareTheBuffer) {
  const ag::Tensor x = agtest::make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(ag::reshape(x, {3, 2}).data<float>(), x.data<float>());
  EXPECT_EQ(x[1].data<float>(), x.data<float>() + 3);
  EXPECT_EQ(ag::expand_dims(x, 0).data<float>(), x.data<float>());
  EXPECT_EQ(ag::squeeze(ag::expand_dims(x, 0)).data<float>(), x.data<float>());
}

TEST(Aliasing, OpsNeverWriteIntoTheirInputs) {
  const ag::Tensor x = agtest::make<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const auto before = values(x);
  const ag::Tensor v = ag::reshape(x, {6});
  const ag::Tensor row = x[1];
  const ag::Tensor col = ag::expand_dims(x, 2);
  // Ops whose output has the input's shape and dtype are where in-place reuse would be tempting.
  std::vector<ag::Tensor> results = {x + x,       x * 2,         -x,          ag::exp(x),           ag::abs(v),
                                     row - 1,     ag::square(col), ag::relu(x) , ag::cast(x, ag::float32),
                                     ag::maximum(x, 0.f), ag::where(x > 2, x, 0.f), ag::transpose(x)};
  (void)results;
  EXPECT_EQ(values(x), before);
  EXPECT_EQ(values(v), before);
  EXPECT_EQ(values(row), (std::vector<float>{4, 5, 6}));
  EXPECT_EQ(values(col), before);
}

TEST(Aliasing, TemporariesDoNotCorruptViewsOfThem) {
  const ag::Tensor x = agtest::make<float>({1, 2, 3, 4}, {2, 2});
  const ag::Tensor row = (x + 1)[0];        // a view into a temporary result
  const ag::Tensor flat = ag::reshape(x * 3, {4});
  ag::Tensor chain = ((x + 1) * 2 - 1) / 2;  // temporaries that nothing else holds
  chain = ag::exp(chain) + ag::exp(chain);
  const ag::Tensor y = row * 10 + flat[0];
  EXPECT_EQ(values(row), (std::vector<float>{2, 3}));
  EXPECT_EQ(values(flat), (std::vector<float>{3, 6, 9, 12}));
  EXPECT_EQ(values(y), (std::vector<float>{23, 33}));
  EXPECT_EQ(values(x), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Aliasing, CompoundAssignmentRebindsAndLeavesViewsAlone) {
  ag::Tensor x = agtest::make<float>({1, 2, 3, 4}, {2, 2});
  const ag::Tensor copy = x;
  const ag::Tensor view = ag::reshape(x, {4});
  const ag::Tensor row = x[0];
  x += 10;
  x *= x;
  x -= copy;
  EXPECT_EQ(values(copy), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values(view), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values(row), (std::vector<float>{1, 2}));
  EXPECT_EQ(values(x), (std::vector<float>{120, 142, 166, 192}));
  // A tensor updated from a view of itself.
  ag::Tensor y = agtest::make<float>({1, 2, 3, 4}, {2, 2});
  const ag::Tensor y0 = y[0];
  y += y[1];
  EXPECT_EQ(values(y), (std::vector<float>{4, 6, 6, 8}));
  EXPECT_EQ(values(y0), (std::vector<float>{1, 2}));
}

TEST(Aliasing, ChainsOfRvaluesKeepIntermediatesThatAreStillHeld) {
  // Every intermediate is held by a name; a buffer-reusing runtime must see that.
  const ag::Tensor a = ag::range(0.f, 8.f, 1.f);
  const ag::Tensor b = a + 1;
  const ag::Tensor b_view = ag::reshape(b, {2, 4});
  const ag::Tensor c = std::move(ag::Tensor(b)) * 2;  // a moved-from copy of b: b still holds the buffer
  EXPECT_EQ(values(b), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(values(b_view), values(b));
  EXPECT_EQ(values(c), (std::vector<float>{2, 4, 6, 8, 10, 12, 14, 16}));
  ag::Tensor d = a * 1;
  const ag::Tensor d_row = ag::reshape(d, {2, 4})[1];
  d = std::move(d) + 100;  // the only handle is moved in, but a view still reads its buffer
  EXPECT_EQ(values(d_row), (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(values(d)[0], 100.f);
}

TEST(Aliasing, VariableValuesAreSnapshots) {
  ag::Variable v(agtest::make<float>({1, 2}, {2}));
  const ag::Tensor before = v.value();
  const ag::Tensor init_row = ag::reshape(before, {1, 2})[0];
  v.assign_add(ag::constant({10.f, 20.f}));
  v.assign_sub(1.f);
  EXPECT_EQ(values(before), (std::vector<float>{1, 2}));
  EXPECT_EQ(values(init_row), (std::vector<float>{1, 2}));
  EXPECT_EQ(values(v.value()), (std::vector<float>{10, 21}));
  // The Variable does not see later changes of the tensor it was assigned from.
  ag::Tensor src = ag::constant({5.f, 6.f});
  v.assign(src);
  src += 1;
  EXPECT_EQ(values(v.value()), (std::vector<float>{5, 6}));
}

TEST(Aliasing, TensorArrayReadsAreSnapshots) {
  ag::TensorArray ta(ag::float32);
  ag::Tensor x = ag::constant({1.f, 2.f});
  ta = ta.write(0, x);
  x += 5;  // rebinding x does not change the stored element
  const ag::Tensor r = ta.read(0);
  ta = ta.write(0, ag::constant({7.f, 8.f}));
  EXPECT_EQ(values(r), (std::vector<float>{1, 2}));
  EXPECT_EQ(values(ta.read(0)), (std::vector<float>{7, 8}));
  const ag::Tensor stacked = ta.stack();
  ta = ta.write(0, ag::constant({0.f, 0.f}));
  EXPECT_EQ(values(stacked), (std::vector<float>{7, 8}));
}

TEST(Aliasing, ConcatAndStackOfTheSameTensor) {
  const ag::Tensor x = ag::constant({1, 2});
  EXPECT_EQ(ag::concat({x, x, x}, 0).to_vector<int32_t>(), (std::vector<int32_t>{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(ag::stack({x, x}, 1).to_vector<int32_t>(), (std::vector<int32_t>{1, 1, 2, 2}));
  EXPECT_EQ(x.to_vector<int32_t>(), (std::vector<int32_t>{1, 2}));
}

TEST(Aliasing, ViewsOutliveTheirSource) {
  ag::Tensor row;
  {
    const ag::Tensor big = ag::reshape(ag::range(0.f, 100000.f, 1.f), {1000, 100});
    row = big[999];
  }
  const ag::Tensor other = ag::ones({1000, 100});  // may reuse freed memory
  EXPECT_EQ(row.to_vector<float>()[0], 99900.f);
  EXPECT_EQ(row.to_vector<float>()[99], 99999.f);
  EXPECT_EQ(ag::reduce_sum(other).item<float>(), 100000.f);
}

}  // namespace
