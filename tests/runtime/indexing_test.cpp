// NumPy-style indexing and JAX's functional updates, eagerly: NumPy's results for a [3, 4]
// matrix 0..11 (bounds that clamp, negative steps, integers that drop a dim, new axes), the
// updates, their gradients, and the errors.
#include <gtest/gtest.h>

#include <ag/ag.h>

#include "../common/error_message.h"

#include <string>
#include <vector>

namespace {

using ag::Slice;
using ag::Tensor;

Tensor matrix() { return ag::reshape(ag::range(12), {3, 4}); }  // int32 0..11
std::vector<int64_t> v(const Tensor& t) { return t.to_vector<int64_t>(); }

TEST(Indexing, MatchesNumPy) {
  const Tensor x = matrix();
  EXPECT_EQ(v(x(1)), (std::vector<int64_t>{4, 5, 6, 7}));                               // x[1]
  EXPECT_EQ(v(x(-1, -1)), (std::vector<int64_t>{11}));                                 // x[-1, -1]
  EXPECT_EQ(x(-1, -1).shape(), ag::Shape{});
  EXPECT_EQ(v(x(ag::all, 2)), (std::vector<int64_t>{2, 6, 10}));                       // x[:, 2]
  EXPECT_EQ(v(x(Slice{1, -1}, Slice{1, 3})), (std::vector<int64_t>{5, 6}));            // x[1:-1, 1:3]
  EXPECT_EQ(x(Slice{1, -1}, Slice{1, 3}).shape(), (ag::Shape{1, 2}));
  EXPECT_EQ(v(x(ag::all, Slice{ag::none, ag::none, 2})), (std::vector<int64_t>{0, 2, 4, 6, 8, 10}));  // x[:, ::2]
  EXPECT_EQ(v(x(Slice{ag::none, ag::none, -1}, 0)), (std::vector<int64_t>{8, 4, 0}));  // x[::-1, 0]
  EXPECT_EQ(v(x(1, Slice{3, 0, -2})), (std::vector<int64_t>{7, 5}));                   // x[1, 3:0:-2]
  EXPECT_EQ(v(x(0, Slice{-100, 100})), (std::vector<int64_t>{0, 1, 2, 3}));            // bounds clamp
  EXPECT_EQ(x(0, Slice{3, 1}).shape(), ag::Shape{0});                                  // empty
  EXPECT_EQ(x(ag::newaxis, 1, ag::all, ag::newaxis).shape(), (ag::Shape{1, 4, 1}));    // x[None, 1, :, None]
  EXPECT_EQ(v(x(ag::newaxis, 1, ag::all, ag::newaxis)), (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(x(Slice{1}).shape(), (ag::Shape{2, 4}));                                    // x[1:]
}

TEST(Indexing, FunctionalUpdates) {
  const Tensor x = matrix();
  EXPECT_EQ(v(x.at(Slice{1, -1}, Slice{1, 3}).set(ag::constant(std::vector<int32_t>{-1, -2}))),
            (std::vector<int64_t>{0, 1, 2, 3, 4, -1, -2, 7, 8, 9, 10, 11}));
  EXPECT_EQ(v(x.at(0).set(7)), (std::vector<int64_t>{7, 7, 7, 7, 4, 5, 6, 7, 8, 9, 10, 11}));  // broadcast
  EXPECT_EQ(v(x.at(ag::all, -1).add(100)), (std::vector<int64_t>{0, 1, 2, 103, 4, 5, 6, 107, 8, 9, 10, 111}));
  EXPECT_EQ(v(x), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}));  // x itself is unchanged
  EXPECT_EQ(v(x.at(2, Slice{1, 3}).get()), (std::vector<int64_t>{9, 10}));
  // Steps other than 1: x[::2, 1::2] = -1; x[::-1, 0] += [10, 20, 30] (row 2 gets 10).
  EXPECT_EQ(v(x.at(Slice{ag::none, ag::none, 2}, Slice{1, ag::none, 2}).set(-1)),
            (std::vector<int64_t>{0, -1, 2, -1, 4, 5, 6, 7, 8, -1, 10, -1}));
  EXPECT_EQ(v(x.at(Slice{ag::none, ag::none, -1}, 0).add(ag::constant(std::vector<int32_t>{10, 20, 30}))),
            (std::vector<int64_t>{30, 1, 2, 3, 24, 5, 6, 7, 18, 9, 10, 11}));
  EXPECT_EQ(x.at(Slice{3, 1, 2}).set(5).shape(), x.shape());  // an empty box
}

TEST(Indexing, Gradients) {
  const Tensor x = ag::cast(matrix(), ag::float64);
  const Tensor w = ag::constant(std::vector<double>{1, 2});
  ag::GradientTape tape(/*persistent=*/true);
  tape.watch(x);
  tape.watch(w);
  // Read a strided box and a row, write w into a box: the gradient of x is 1 where read (twice
  // where read twice) and 0 where overwritten; w's is what its box contributed.
  const Tensor y = ag::reduce_sum(x(ag::all, Slice{ag::none, ag::none, 2})) + ag::reduce_sum(x(1)) * 3;
  const Tensor z = x.at(Slice{0, 1}, Slice{1, 3}).set(ag::reshape(w, {1, 2}));
  const Tensor every_other = x.at(2, Slice{ag::none, ag::none, 3}).set(w);  // x[2, ::3] = w: cols 0 and 3
  const Tensor loss = y + ag::reduce_sum(z * z);
  const std::vector<double> gx = tape.gradient(loss, x).to_vector<double>();
  // d/dx: 1 (strided read, cols 0 and 2) + 3 (row 1) + 2x (z's, where not overwritten)
  std::vector<double> want(12);
  for (int i = 0; i < 12; ++i) {
    const int r = i / 4, c = i % 4;
    want[i] = (c % 2 == 0 ? 1 : 0) + (r == 1 ? 3 : 0) + ((r == 0 && (c == 1 || c == 2)) ? 0 : 2.0 * i);
  }
  EXPECT_EQ(gx, want);
  EXPECT_EQ(tape.gradient(loss, w).to_vector<double>(), (std::vector<double>{2, 4}));
  const Tensor strided_loss = ag::reduce_sum(every_other * every_other * 0.5);
  std::vector<double> want_strided(12);
  for (int i = 0; i < 12; ++i) want_strided[i] = (i == 8 || i == 11) ? 0 : i;  // x, but where w was written
  EXPECT_EQ(tape.gradient(strided_loss, x).to_vector<double>(), want_strided);
  EXPECT_EQ(tape.gradient(strided_loss, w).to_vector<double>(), (std::vector<double>{1, 2}));
}

TEST(Indexing, Errors) {
  const Tensor x = matrix();
  std::string m = agtest::error_message([&] { x(3); });
  EXPECT_NE(m.find("index 3 is out of range for dim 0 of size 3"), std::string::npos) << m;
  EXPECT_NE(m.find("indexing_test.cpp:"), std::string::npos) << m;
  EXPECT_THROW(x(-4), ag::InvalidArgumentError);
  m = agtest::error_message([&] { x(0, 0, 0); });
  EXPECT_NE(m.find("3 indices for a tensor of rank 2"), std::string::npos) << m;
  m = agtest::error_message([&] { x(Slice{0, 2, 0}); });
  EXPECT_NE(m.find("the step of dim 0 is 0"), std::string::npos) << m;
  m = agtest::error_message([&] { x.at(0).set(ag::constant(std::vector<float>{1})); });
  EXPECT_NE(m.find("the value is float32 but the tensor is int32"), std::string::npos) << m;
  m = agtest::error_message([&] { x.at(0).set(ag::constant(std::vector<int32_t>{1, 2, 3})); });
  EXPECT_NE(m.find("cannot broadcast a tensor of shape [3] to [4]"), std::string::npos) << m;
}

}  // namespace
