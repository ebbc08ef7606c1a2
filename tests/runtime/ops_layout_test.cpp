// Layout ops: transpose, reshape, concat, stack, slice, gather, expand_dims, squeeze, shape_of,
// x[i], against reference index arithmetic; and their errors.
#include "test_util.h"

namespace {

using Dims = std::vector<int64_t>;
using agtest::make;

std::vector<int32_t> iota(int64_t n, int32_t start = 0) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (auto& x : v) x = start++;
  return v;
}

// ---- transpose ----

TEST(Transpose, EveryPermutationOfRank4) {
  const Dims shape = {2, 3, 4, 5};
  const auto x = iota(120);
  const ag::Tensor t = make(x, shape);
  const auto st = agtest::row_major_strides(shape);
  Dims perm = {0, 1, 2, 3};
  do {
    Dims out_shape;
    for (int64_t p : perm) out_shape.push_back(shape[p]);
    std::vector<int32_t> expected;
    agtest::for_each_index(out_shape, [&](const Dims& o) {
      int64_t off = 0;
      for (size_t d = 0; d < 4; ++d) off += o[d] * st[perm[d]];
      expected.push_back(x[off]);
    });
    const ag::Tensor r = ag::transpose(t, perm);
    SCOPED_TRACE(::testing::PrintToString(perm));
    EXPECT_EQ(agtest::dims(r), out_shape);
    EXPECT_EQ(r.to_vector<int32_t>(), expected);
  } while (std::next_permutation(perm.begin(), perm.end()));
}

TEST(Transpose, DefaultReversesAndNegativePermEntriesCount) {
  const ag::Tensor t = make(iota(6), {2, 3});
  EXPECT_EQ(ag::transpose(t).to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(agtest::dims(ag::transpose(t)), (Dims{3, 2}));
  EXPECT_EQ(ag::transpose(t, {-1, 0}).to_vector<int32_t>(), (std::vector<int32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(ag::transpose(ag::Tensor(5)).item<int32_t>(), 5);
  EXPECT_EQ(agtest::dims(ag::transpose(ag::zeros({0, 3}))), (Dims{3, 0}));
  const ag::Tensor d = ag::transpose(agtest::make<double>({1.5, 2.5}, {1, 2}));
  EXPECT_EQ(d.to_vector<double>(), (std::vector<double>{1.5, 2.5}));
  const ag::Tensor b = ag::transpose(agtest::make<bool>({true, false, false, true, true, false}, {3, 2}));
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, true, false, true, false}));
}

TEST(Transpose, Errors) {
  const ag::Tensor t = ag::zeros({2, 3});
  AG_EXPECT_ERROR(ag::ValueError, ag::transpose(t, {0}), "ag::transpose", "perm", "rank 2");
  AG_EXPECT_ERROR(ag::ValueError, ag::transpose(t, {0, 0}), "ag::transpose", "not a permutation");
  AG_EXPECT_ERROR(ag::ValueError, ag::transpose(t, {0, 2}), "ag::transpose", "not a permutation");
}

// ---- reshape ----

TEST(Reshape, KeepsRowMajorOrderAndInfersOneDim) {
  const ag::Tensor t = make(iota(24), {2, 3, 4});
  const ag::Tensor r = ag::reshape(t, {4, -1});
  EXPECT_EQ(agtest::dims(r), (Dims{4, 6}));
  EXPECT_EQ(r.to_vector<int32_t>(), iota(24));
  EXPECT_EQ(agtest::dims(ag::reshape(t, {-1})), (Dims{24}));
  EXPECT_EQ(agtest::dims(ag::reshape(t, {2, 1, 3, 1, 4, 1})), (Dims{2, 1, 3, 1, 4, 1}));
  EXPECT_EQ(ag::reshape(ag::constant({7}), ag::Shape{}).rank(), 0);
  EXPECT_EQ(agtest::dims(ag::reshape(ag::Tensor(7), {1, 1})), (Dims{1, 1}));
  EXPECT_EQ(agtest::dims(ag::reshape(ag::zeros({0, 3}), {3, 0, 5})), (Dims{3, 0, 5}));
  EXPECT_EQ(agtest::dims(ag::reshape(ag::zeros({0, 3}), {-1, 3})), (Dims{0, 3}));
}

TEST(Reshape, Errors) {
  const ag::Tensor t = ag::zeros({2, 3});
  AG_EXPECT_ERROR(ag::ValueError, ag::reshape(t, {4, 2}), "ag::reshape", "[2,3]", "[4,2]");
  AG_EXPECT_ERROR(ag::ValueError, ag::reshape(t, {4, -1}), "ag::reshape", "[2,3]", "[4,?]");
  AG_EXPECT_ERROR(ag::ValueError, ag::reshape(t, {-1, -1}), "ag::reshape", "-1");
  AG_EXPECT_ERROR(ag::ValueError, ag::reshape(t, {-2, -3}), "ag::reshape");
}

// ---- concat and stack ----

TEST(Concat, EveryAxisAgainstTheReference) {
  const ag::Tensor a = make(iota(24), {2, 3, 4});
  for (int64_t axis = -3; axis < 3; ++axis) {
    const int64_t ax = axis < 0 ? axis + 3 : axis;
    Dims sb = {2, 3, 4};
    sb[ax] = 2;
    const auto bv = iota(agtest::count(sb), 100);
    const ag::Tensor b = make(bv, sb);
    Dims so = {2, 3, 4};
    so[ax] += 2;
    std::vector<int32_t> expected;
    agtest::for_each_index(so, [&](const Dims& idx) {
      Dims i = idx;
      if (i[ax] < Dims{2, 3, 4}[ax]) {
        expected.push_back(static_cast<int32_t>(i[0] * 12 + i[1] * 4 + i[2]));
      } else {
        i[ax] -= Dims{2, 3, 4}[ax];
        const auto st = agtest::row_major_strides(sb);
        expected.push_back(bv[i[0] * st[0] + i[1] * st[1] + i[2] * st[2]]);
      }
    });
    SCOPED_TRACE(axis);
    const ag::Tensor c = ag::concat({a, b}, axis);
    EXPECT_EQ(agtest::dims(c), so);
    EXPECT_EQ(c.to_vector<int32_t>(), expected);
  }
}

TEST(Concat, ManyPiecesEmptyPiecesAndOtherDtypes) {
  const ag::Tensor c = ag::concat({ag::constant({1.5}), ag::zeros({0}, ag::float64), ag::constant({2.5, 3.5})}, 0);
  EXPECT_EQ(c.to_vector<double>(), (std::vector<double>{1.5, 2.5, 3.5}));
  const ag::Tensor b = ag::concat({ag::constant({{true}, {false}}), ag::constant({{false}, {true}})}, 1);
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{true, false, false, true}));
  const ag::Tensor one = ag::constant({int64_t{4}});
  EXPECT_EQ(ag::concat({one}, 0).to_vector<int64_t>(), (std::vector<int64_t>{4}));
  EXPECT_EQ(agtest::dims(ag::concat({ag::zeros({0, 2}), ag::zeros({0, 3})}, 1)), (Dims{0, 5}));
}

TEST(Concat, Errors) {
  AG_EXPECT_ERROR(ag::ValueError, ag::concat({ag::zeros({2, 3}), ag::zeros({3, 3})}, 1), "ag::concat", "[3,3]", "[2,3]");
  AG_EXPECT_ERROR(ag::ValueError, ag::concat({ag::zeros({2, 3}), ag::zeros({3})}, 0), "ag::concat", "rank");
  AG_EXPECT_ERROR(ag::TypeError, ag::concat({ag::zeros({2}), ag::zeros({2}, ag::int32)}, 0), "ag::concat", "float32",
                  "int32");
  AG_EXPECT_ERROR(ag::ValueError, ag::concat({ag::Tensor(1), ag::Tensor(2)}, 0), "ag::concat", "scalars");
  AG_EXPECT_ERROR(ag::ValueError, ag::concat({ag::zeros({2}), ag::zeros({2})}, 1), "ag::concat", "axis 1");
  AG_EXPECT_ERROR(ag::ValueError, ag::concat({ag::zeros({2})}, 1), "ag::concat", "axis 1");
  AG_EXPECT_ERROR(ag::ValueError, ag::concat({}, 0), "ag::concat", "at least one");
}

TEST(Stack, EveryAxis) {
  const ag::Tensor a = make(iota(6), {2, 3}), b = make(iota(6, 10), {2, 3});
  const ag::Tensor s0 = ag::stack({a, b});
  EXPECT_EQ(agtest::dims(s0), (Dims{2, 2, 3}));
  EXPECT_EQ(s0.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15}));
  const ag::Tensor s1 = ag::stack({a, b}, 1);
  EXPECT_EQ(agtest::dims(s1), (Dims{2, 2, 3}));
  EXPECT_EQ(s1.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15}));
  const ag::Tensor s2 = ag::stack({a, b}, -1);
  EXPECT_EQ(agtest::dims(s2), (Dims{2, 3, 2}));
  EXPECT_EQ(s2.to_vector<int32_t>(), (std::vector<int32_t>{0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15}));
  const ag::Tensor sc = ag::stack({ag::Tensor(1.f), ag::Tensor(2.f), ag::Tensor(3.f)});
  EXPECT_EQ(agtest::dims(sc), (Dims{3}));
  EXPECT_EQ(sc.to_vector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(agtest::dims(ag::stack({a})), (Dims{1, 2, 3}));
}

TEST(Stack, ErrorsNameStackAndTheShapes) {
  AG_EXPECT_ERROR(ag::ValueError, ag::stack({ag::zeros({2}), ag::zeros({3})}), "ag::stack", "[2]", "[3]");
  AG_EXPECT_ERROR(ag::ValueError, ag::stack({ag::zeros({2}), ag::zeros({2, 1})}), "ag::stack", "[2]", "[2,1]");
  AG_EXPECT_ERROR(ag::TypeError, ag::stack({ag::zeros({2}), ag::zeros({2}, ag::int64)}), "ag::stack", "float32",
                  "int64");
  AG_EXPECT_ERROR(ag::ValueError, ag::stack({ag::zeros({2}), ag::zeros({2})}, 2), "ag::stack", "axis 2");
  AG_EXPECT_ERROR(ag::ValueError, ag::stack({}), "ag::stack", "at least one");
}

// ---- slice ----

TEST(Slice, BoxesAgainstTheReference) {
  const Dims shape = {3, 4, 5};
  const auto x = iota(60);
  const ag::Tensor t = make(x, shape);
  struct Box {
    Dims begin, size;
  };
  for (const Box& box : {Box{{0, 0, 0}, {3, 4, 5}}, Box{{1, 1, 1}, {2, 2, 2}}, Box{{0, 2, 0}, {-1, -1, 3}},
                         Box{{2, 3, 4}, {1, 1, 1}}, Box{{1, 0, 2}, {0, 4, 2}}, Box{{3, 4, 5}, {0, 0, 0}}}) {
    Dims out;
    for (size_t d = 0; d < 3; ++d) out.push_back(box.size[d] < 0 ? shape[d] - box.begin[d] : box.size[d]);
    std::vector<int32_t> expected;
    agtest::for_each_index(out, [&](const Dims& i) {
      expected.push_back(x[(box.begin[0] + i[0]) * 20 + (box.begin[1] + i[1]) * 5 + box.begin[2] + i[2]]);
    });
    const ag::Tensor s = ag::slice(t, box.begin, box.size);
    SCOPED_TRACE(::testing::PrintToString(box.begin) + ::testing::PrintToString(box.size));
    EXPECT_EQ(agtest::dims(s), out);
    EXPECT_EQ(s.to_vector<int32_t>(), expected);
  }
  EXPECT_EQ(ag::slice(ag::Tensor(3.5), {}, {}).item<double>(), 3.5);
}

TEST(Slice, Errors) {
  const ag::Tensor t = ag::zeros({3, 4});
  AG_EXPECT_ERROR(ag::ValueError, ag::slice(t, {0}, {1}), "ag::slice", "[3,4]");
  AG_EXPECT_ERROR(ag::ValueError, ag::slice(t, {2, 0}, {2, 4}), "ag::slice", "out of range", "[3,4]");
  AG_EXPECT_ERROR(ag::ValueError, ag::slice(t, {4, 0}, {-1, 4}), "ag::slice", "out of range");
  AG_EXPECT_ERROR(ag::ValueError, ag::slice(t, {-1, 0}, {1, 1}), "ag::slice", "begin");
  AG_EXPECT_ERROR(ag::ValueError, ag::slice(t, {0, 0}, {1, -2}), "ag::slice", "size");
}

// ---- gather and x[i] ----

TEST(Gather, AlongEachAxisWithMultiDimIndices) {
  const ag::Tensor p = make(iota(24), {2, 3, 4});
  const ag::Tensor idx = agtest::make<int64_t>({2, 0, 2, 1}, {2, 2});
  const ag::Tensor g1 = ag::gather(p, idx, 1);
  EXPECT_EQ(agtest::dims(g1), (Dims{2, 2, 2, 4}));
  std::vector<int32_t> expected;
  const int64_t iv[4] = {2, 0, 2, 1};
  for (int a = 0; a < 2; ++a)
    for (int j = 0; j < 4; ++j)
      for (int c = 0; c < 4; ++c) expected.push_back(static_cast<int32_t>(a * 12 + iv[j] * 4 + c));
  EXPECT_EQ(g1.to_vector<int32_t>(), expected);
  const ag::Tensor g0 = ag::gather(p, ag::constant({1, 1, 0}));
  EXPECT_EQ(agtest::dims(g0), (Dims{3, 3, 4}));
  EXPECT_EQ(g0[2].to_vector<int32_t>(), iota(12));
  EXPECT_EQ(g0[0].to_vector<int32_t>(), iota(12, 12));
  const ag::Tensor g2 = ag::gather(p, ag::constant({3, 0}), -1);
  EXPECT_EQ(agtest::dims(g2), (Dims{2, 3, 2}));
  EXPECT_EQ(g2.to_vector<int32_t>()[0], 3);
  EXPECT_EQ(g2.to_vector<int32_t>()[11], 20);
  const ag::Tensor gs = ag::gather(p, ag::Tensor(1), 2);  // scalar index removes the axis
  EXPECT_EQ(agtest::dims(gs), (Dims{2, 3}));
  EXPECT_EQ(gs.to_vector<int32_t>(), (std::vector<int32_t>{1, 5, 9, 13, 17, 21}));
  EXPECT_EQ(agtest::dims(ag::gather(p, ag::zeros({0}, ag::int32))), (Dims{0, 3, 4}));
}

TEST(Gather, Errors) {
  const ag::Tensor p = ag::zeros({2, 3});
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ag::gather(p, ag::constant({0, 2})), "ag::gather", "index 2", "[2,3]");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ag::gather(p, ag::constant({-1})), "ag::gather", "index -1");
  AG_EXPECT_ERROR(ag::TypeError, ag::gather(p, ag::constant({0.f})), "ag::gather", "indices", "float32");
  AG_EXPECT_ERROR(ag::ValueError, ag::gather(p, ag::constant({0}), 2), "ag::gather", "axis 2");
  AG_EXPECT_ERROR(ag::ValueError, ag::gather(ag::Tensor(1.f), ag::constant({0})), "ag::gather", "scalar");
}

TEST(Index, AlongAxisZero) {
  const ag::Tensor t = make(iota(12), {3, 4});
  EXPECT_EQ(t[1].to_vector<int32_t>(), (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(t[-1].to_vector<int32_t>(), (std::vector<int32_t>{8, 9, 10, 11}));
  EXPECT_EQ(t[2][3].item<int32_t>(), 11);
  EXPECT_EQ(t[1][1].rank(), 0);
  EXPECT_EQ(t[ag::Tensor(2)].to_vector<int32_t>(), (std::vector<int32_t>{8, 9, 10, 11}));
  AG_EXPECT_ERROR(ag::InvalidArgumentError, t[3], "index", "3", "[3,4]");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, t[-4], "index", "-4");
  AG_EXPECT_ERROR(ag::ValueError, ag::Tensor(1)[0], "scalar");
  AG_EXPECT_ERROR(ag::InvalidArgumentError, ag::zeros({0, 2})[0], "index", "0");
}

// ---- expand_dims, squeeze, shape_of ----

TEST(ExpandSqueeze, Shapes) {
  const ag::Tensor t = make(iota(6), {2, 3});
  EXPECT_EQ(agtest::dims(ag::expand_dims(t, 0)), (Dims{1, 2, 3}));
  EXPECT_EQ(agtest::dims(ag::expand_dims(t, 2)), (Dims{2, 3, 1}));
  EXPECT_EQ(agtest::dims(ag::expand_dims(t, -1)), (Dims{2, 3, 1}));
  EXPECT_EQ(agtest::dims(ag::expand_dims(t, -3)), (Dims{1, 2, 3}));
  EXPECT_EQ(agtest::dims(ag::expand_dims(ag::Tensor(1), 0)), (Dims{1}));
  EXPECT_EQ(ag::expand_dims(t, 1).to_vector<int32_t>(), iota(6));
  AG_EXPECT_ERROR(ag::ValueError, ag::expand_dims(t, 3), "ag::expand_dims", "axis 3");
  AG_EXPECT_ERROR(ag::ValueError, ag::expand_dims(t, -4), "ag::expand_dims", "axis -4");

  const ag::Tensor u = ag::reshape(t, {1, 2, 1, 3, 1});
  EXPECT_EQ(agtest::dims(ag::squeeze(u)), (Dims{2, 3}));
  EXPECT_EQ(agtest::dims(ag::squeeze(u, {2})), (Dims{1, 2, 3, 1}));
  EXPECT_EQ(agtest::dims(ag::squeeze(u, {0, -1})), (Dims{2, 1, 3}));
  EXPECT_EQ(ag::squeeze(u).to_vector<int32_t>(), iota(6));
  EXPECT_EQ(ag::squeeze(ag::constant({{5}})).rank(), 0);
  AG_EXPECT_ERROR(ag::ValueError, ag::squeeze(u, {1}), "ag::squeeze", "dim 1", "size 2");
  AG_EXPECT_ERROR(ag::ValueError, ag::squeeze(u, {5}), "ag::squeeze", "axis 5");
  // A dim of size 0 is not 1: squeezing it would invent elements.
  AG_EXPECT_ERROR(ag::ValueError, ag::squeeze(ag::zeros({2, 0}), {1}), "ag::squeeze", "size 0");
  EXPECT_EQ(agtest::dims(ag::squeeze(ag::zeros({1, 0, 1}))), (Dims{0}));
}

TEST(ShapeOf, IsAnInt64Vector) {
  const ag::Tensor s = ag::shape_of(ag::zeros({2, 0, 5}));
  EXPECT_EQ(s.dtype(), ag::int64);
  EXPECT_EQ(s.to_vector<int64_t>(), (std::vector<int64_t>{2, 0, 5}));
  const ag::Tensor e = ag::shape_of(ag::Tensor(1.f));
  EXPECT_EQ(agtest::dims(e), (Dims{0}));
}

}  // namespace

// ---- every dtype: layout ops move elements of 1, 4 and 8 bytes ----

namespace {

template <class T>
class LayoutAllDtypes : public ::testing::Test {};
using AllTypes = ::testing::Types<bool, int32_t, int64_t, float, double>;
TYPED_TEST_SUITE(LayoutAllDtypes, AllTypes);

template <class T>
std::vector<T> values(int n) {
  std::vector<T> v;
  for (int i = 0; i < n; ++i) v.push_back(std::is_same_v<T, bool> ? T(i % 3 == 0) : static_cast<T>(i * 3 - 7));
  return v;
}

TYPED_TEST(LayoutAllDtypes, MoveElementsExactly) {
  using T = TypeParam;
  const auto v = values<T>(6);
  const ag::Tensor x = make(v, {2, 3});
  // transpose
  EXPECT_EQ(ag::transpose(x).template to_vector<T>(), (std::vector<T>{v[0], v[3], v[1], v[4], v[2], v[5]}));
  // reshape / expand_dims / squeeze keep the order
  EXPECT_EQ(ag::squeeze(ag::expand_dims(ag::reshape(x, {3, 2}), 1)).template to_vector<T>(), v);
  // concat along both axes
  EXPECT_EQ(ag::concat({x, x}, 0).template to_vector<T>(),
            (std::vector<T>{v[0], v[1], v[2], v[3], v[4], v[5], v[0], v[1], v[2], v[3], v[4], v[5]}));
  EXPECT_EQ(ag::concat({x, x}, 1).template to_vector<T>(),
            (std::vector<T>{v[0], v[1], v[2], v[0], v[1], v[2], v[3], v[4], v[5], v[3], v[4], v[5]}));
  // stack, slice, gather, x[i]
  EXPECT_EQ(ag::stack({x[0], x[1]}, 1).template to_vector<T>(), (std::vector<T>{v[0], v[3], v[1], v[4], v[2], v[5]}));
  EXPECT_EQ(ag::slice(x, {1, 1}, {1, 2}).template to_vector<T>(), (std::vector<T>{v[4], v[5]}));
  EXPECT_EQ(ag::gather(x, ag::constant({2, 0}), 1).template to_vector<T>(), (std::vector<T>{v[2], v[0], v[5], v[3]}));
  EXPECT_EQ(x[-1][1].template item<T>(), v[4]);
  // where and cast round trips
  const ag::Tensor c = ag::constant({true, false, true});
  EXPECT_EQ(ag::where(c, x, ag::zeros_like(x)).template to_vector<T>(),
            (std::vector<T>{v[0], T(0), v[2], v[3], T(0), v[5]}));
  EXPECT_EQ(ag::cast(ag::cast(x, ag::float64), ag::dtype_of<T>()).template to_vector<T>(), v);
  EXPECT_EQ(ag::shape_of(x).template to_vector<int64_t>(), (std::vector<int64_t>{2, 3}));
}

}  // namespace
