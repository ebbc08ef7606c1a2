// NumPy broadcasting in elementwise ops: scalars, size-1 dims on either side, leading dims, rank
// 6, zero-size dims, and mismatches that raise ValueError naming both shapes.
#include "test_util.h"

namespace {

using Dims = std::vector<int64_t>;
using agtest::make;
using agtest::ref_binary;
using agtest::sample;

struct Case {
  Dims a, b;
};

const Case kCases[] = {
    {{}, {}},
    {{}, {2, 3}},
    {{2, 3}, {}},
    {{1}, {5}},
    {{5}, {1}},
    {{3, 1}, {1, 4}},
    {{1, 4}, {3, 1}},
    {{4}, {2, 3, 4}},
    {{3, 4}, {2, 1, 4}},
    {{2, 1, 4}, {3, 1}},
    {{1, 1}, {1}},
    {{2, 3, 4}, {2, 3, 4}},
    {{2, 1, 3, 1, 2, 1}, {1, 2, 1, 2, 1, 3}},   // rank 6, alternating broadcast dims
    {{2, 3, 1, 2, 1, 2}, {3, 4, 2, 5, 1}},      // rank 6 with a rank-5 operand
    {{1, 1, 1, 1, 1, 7}, {2, 2, 2, 2, 2, 1}},
    {{3, 1, 1, 1, 1, 1, 1, 2}, {1, 2}},         // rank 8, the maximum
    {{0, 3}, {1, 3}},
    {{0}, {}},
    {{2, 0}, {2, 1}},
    {{0, 1}, {1, 4}},
    // Short rows walked a plane at a time (binary_rows' small-row path, through a table of
    // offsets up to 256 elements a plane): k-means' distances, a plane of rows broadcast along
    // the plane, both operands broadcasting inside it, and a plane of 300 (without the table).
    {{5, 1, 2}, {1, 7, 2}},
    {{2, 1, 3}, {1, 100, 3}},
    {{4, 3, 1}, {4, 1, 3}},
    {{2, 1, 6, 3}, {1, 4, 1, 3}},
    {{3, 5, 1}, {3, 5, 2}},
};

std::string name_of(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

template <class T>
void check_case(const Case& c) {
  SCOPED_TRACE(name_of(c.a) + " with " + name_of(c.b));
  const auto a = sample<T>(agtest::count(c.a), 21), b = sample<T>(agtest::count(c.b), 22, true);
  const ag::Tensor x = make(a, c.a), y = make(b, c.b);
  Dims shape;
  const auto sum = ref_binary<T>(a, c.a, b, c.b, [](T p, T q) { return static_cast<T>(p + q); }, &shape);
  const ag::Tensor s = x + y;
  EXPECT_EQ(agtest::dims(s), shape);
  agtest::expect_values(s, sum);
  agtest::expect_values(x * y, ref_binary<T>(a, c.a, b, c.b, [](T p, T q) { return static_cast<T>(p * q); }));
  agtest::expect_values(y - x, ref_binary<T>(b, c.b, a, c.a, [](T p, T q) { return static_cast<T>(p - q); }));
  agtest::expect_values(x / y, ref_binary<T>(a, c.a, b, c.b, [](T p, T q) { return static_cast<T>(p / q); }));
  agtest::expect_values(ag::maximum(x, y), ref_binary<T>(a, c.a, b, c.b, [](T p, T q) { return std::max(p, q); }));
  const ag::Tensor lt = x < y;
  EXPECT_EQ(agtest::dims(lt), shape);
  agtest::expect_values(lt, ref_binary<bool>(a, c.a, b, c.b, [](T p, T q) { return p < q; }));
  // where broadcasts its condition against both branches.
  const ag::Tensor w = ag::where(lt, x, y);
  agtest::expect_values(w, ref_binary<T>(a, c.a, b, c.b, [](T p, T q) { return p < q ? p : q; }));
}

TEST(Broadcast, Float32) {
  for (const Case& c : kCases) check_case<float>(c);
}
TEST(Broadcast, Float64) {
  for (const Case& c : kCases) check_case<double>(c);
}
TEST(Broadcast, Int32) {
  for (const Case& c : kCases) check_case<int32_t>(c);
}
TEST(Broadcast, Int64) {
  for (const Case& c : kCases) check_case<int64_t>(c);
}

TEST(Broadcast, BoolLogicalOps) {
  const ag::Tensor a = agtest::make<bool>({true, false, true}, {3, 1});
  const ag::Tensor b = agtest::make<bool>({true, false}, {1, 2});
  EXPECT_EQ(agtest::dims(a & b), (Dims{3, 2}));
  EXPECT_EQ((a & b).to_vector<bool>(), (std::vector<bool>{true, false, false, false, true, false}));
  EXPECT_EQ((a | b).to_vector<bool>(), (std::vector<bool>{true, true, true, false, true, true}));
  EXPECT_EQ((a ^ b).to_vector<bool>(), (std::vector<bool>{false, true, true, false, false, true}));
}

TEST(Broadcast, WhereWithThreeShapes) {
  const ag::Tensor cond = agtest::make<bool>({true, false}, {2, 1, 1});
  const ag::Tensor x = agtest::make<int32_t>({1, 2, 3}, {3, 1});
  const ag::Tensor y = agtest::make<int32_t>({10, 20, 30, 40}, {4});
  const ag::Tensor w = ag::where(cond, x, y);
  EXPECT_EQ(agtest::dims(w), (Dims{2, 3, 4}));
  std::vector<int32_t> expected;
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) expected.push_back(c == 0 ? i + 1 : (j + 1) * 10);
  EXPECT_EQ(w.to_vector<int32_t>(), expected);
}

TEST(Broadcast, MismatchRaisesValueErrorNamingBothShapes) {
  const ag::Tensor a = ag::zeros({2, 3}), b = ag::zeros({3, 2});
  AG_EXPECT_ERROR(ag::ValueError, a + b, "operator+", "[2,3]", "[3,2]");
  AG_EXPECT_ERROR(ag::ValueError, ag::zeros({2}) * ag::zeros({3}), "operator*", "[2]", "[3]");
  AG_EXPECT_ERROR(ag::ValueError, ag::zeros({0}) - ag::zeros({2}), "operator-", "[0]", "[2]");
  AG_EXPECT_ERROR(ag::ValueError, ag::zeros({4, 2, 3}) / ag::zeros({5, 1, 3}), "operator/", "[4,2,3]", "[5,1,3]");
  AG_EXPECT_ERROR(ag::ValueError, a < b, "operator<", "[2,3]", "[3,2]");
  AG_EXPECT_ERROR(ag::ValueError, ag::maximum(a, b), "ag::maximum", "[2,3]", "[3,2]");
  AG_EXPECT_ERROR(ag::ValueError, ag::zeros({2}, ag::bool_) & ag::zeros({3}, ag::bool_), "operator&", "[2]", "[3]");
  AG_EXPECT_ERROR(ag::ValueError, ag::where(ag::zeros({2}, ag::bool_), ag::zeros({3}), 0.f), "ag::where", "[2]",
                  "[3]");
  ag::Tensor c = a;
  AG_EXPECT_ERROR(ag::ValueError, c += b, "operator+", "[2,3]", "[3,2]");
}

}  // namespace
