// Sorting, scattering, segments and einsum, eagerly: values against std::stable_sort, against
// TensorFlow's documented examples and against a brute-force einsum; the errors.
#include <gtest/gtest.h>
#include <ag/ag.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "../common/expect_error.h"
#include "../common/random_values.h"

namespace {

using ag::Tensor;

using agtest::expect_error;

TEST(Sort, ArgsortIsStableWithNaNLastAscendingAndFirstDescending) {
  const float nan = NAN;
  const Tensor x = ag::constant(std::vector<float>{3, nan, 1, 3, -2, 1, nan, 0}, {8});
  EXPECT_EQ(ag::argsort(x).to_vector<int32_t>(), (std::vector<int32_t>{4, 7, 2, 5, 0, 3, 1, 6}));
  EXPECT_EQ(ag::argsort(x, -1, ag::SortDirection::descending).to_vector<int32_t>(), (std::vector<int32_t>{1, 6, 0, 3, 2, 5, 7, 4}));
  const std::vector<float> s = ag::sort(x).to_vector<float>();
  EXPECT_EQ(std::vector<float>(s.begin(), s.begin() + 6), (std::vector<float>{-2, 0, 1, 1, 3, 3}));
  EXPECT_TRUE(std::isnan(s[6]) && std::isnan(s[7]));
  EXPECT_EQ(ag::argsort(x).dtype(), ag::int32);
}

TEST(Sort, AlongEveryAxisAndDtypeAgainstStableSort) {
  std::mt19937 rng(3);
  std::vector<int64_t> v(4 * 5 * 3);
  for (int64_t& e : v) e = static_cast<int64_t>(rng() % 7) - 3;  // ties
  for (ag::DType d : {ag::int32, ag::int64, ag::float32, ag::float64}) {
    const Tensor x = ag::cast(ag::constant(v, {4, 5, 3}), d);
    for (int64_t axis : {0, 1, 2, -1})
      for (auto dir : {ag::SortDirection::ascending, ag::SortDirection::descending}) {
        const std::vector<int64_t> got = ag::cast(ag::argsort(x, axis, dir), ag::int64).to_vector<int64_t>();
        const std::vector<int64_t> sorted = ag::cast(ag::sort(x, axis, dir), ag::int64).to_vector<int64_t>();
        const int64_t a = axis < 0 ? axis + 3 : axis;
        const int64_t dims[3] = {4, 5, 3};
        const int64_t stride = a == 0 ? 15 : a == 1 ? 3 : 1, n = dims[a];
        for (int64_t start = 0; start < 60; ++start) {
          if ((start / stride) % n != 0) continue;  // one start per line along the axis
          std::vector<int64_t> order(static_cast<size_t>(n));
          std::iota(order.begin(), order.end(), 0);
          std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) {
            const int64_t u = v[static_cast<size_t>(start + l * stride)], w = v[static_cast<size_t>(start + r * stride)];
            return dir == ag::SortDirection::ascending ? u < w : w < u;
          });
          for (int64_t k = 0; k < n; ++k) {
            ASSERT_EQ(got[static_cast<size_t>(start + k * stride)], order[static_cast<size_t>(k)]) << "axis " << axis << " k " << k;
            ASSERT_EQ(sorted[static_cast<size_t>(start + k * stride)], v[static_cast<size_t>(start + order[static_cast<size_t>(k)] * stride)]);
          }
        }
      }
  }
}

TEST(Sort, TopKGivesTheLargestWithTheLowerIndexFirstAmongEquals) {
  const Tensor x = ag::constant({{1.0f, 5.0f, 3.0f, 5.0f, 2.0f}, {0.0f, -1.0f, 4.0f, 4.0f, 4.0f}});
  const ag::TopK t = ag::top_k(x, 3);
  EXPECT_EQ(t.values.to_vector<float>(), (std::vector<float>{5, 5, 3, 4, 4, 4}));
  EXPECT_EQ(t.indices.to_vector<int32_t>(), (std::vector<int32_t>{1, 3, 2, 2, 3, 4}));
  EXPECT_EQ(ag::top_k(x, 0).values.shape(), (ag::Shape{2, 0}));
  expect_error<ag::ValueError>([&] { ag::top_k(x, 6); }, {"ag::top_k", "k must be in [0, 5]", "sort_scatter_test.cpp:"});
}

TEST(Sort, TakeAlongAxis) {
  const Tensor x = ag::constant({{10, 20, 30}, {40, 50, 60}});
  EXPECT_EQ(ag::take_along_axis(x, ag::constant({{2, 0}, {1, 1}}), 1).to_vector<int32_t>(), (std::vector<int32_t>{30, 10, 50, 50}));
  EXPECT_EQ(ag::take_along_axis(x, ag::constant({{1, 0, 1}}), 0).to_vector<int32_t>(), (std::vector<int32_t>{40, 20, 60}));
  expect_error<ag::InvalidArgumentError>([&] { ag::take_along_axis(x, ag::constant({{3}, {0}}), 1); },
                                         {"ag::take_along_axis", "index 3 is out of range [0, 3)"});
}

// TensorFlow's examples (tf.tensor_scatter_nd_update / _add, tf.math.unsorted_segment_*).
TEST(Scatter, TensorScatterNdUpdateAndAdd) {
  const Tensor tensor = ag::constant(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor indices = ag::constant(std::vector<int32_t>{4, 3, 1, 7}, {4, 1});
  const Tensor updates = ag::constant(std::vector<int32_t>{9, 10, 11, 12});
  EXPECT_EQ(ag::tensor_scatter_nd_update(tensor, indices, updates).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 11, 3, 10, 9, 6, 7, 12}));
  EXPECT_EQ(ag::tensor_scatter_nd_add(tensor, indices, updates).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 13, 3, 14, 14, 6, 7, 20}));
  // Slices: rows 0 and 2 of a [4, 4, 4] tensor; and single elements of a matrix, one twice.
  const Tensor cube = ag::zeros({4, 4, 4}, ag::float32);
  const Tensor rows = ag::tensor_scatter_nd_update(cube, ag::constant(std::vector<int64_t>{0, 2}, {2, 1}), ag::ones({2, 4, 4}, ag::float32) * 5);
  EXPECT_EQ(ag::reduce_sum(rows, {1, 2}).to_vector<float>(), (std::vector<float>{80, 0, 80, 0}));
  const Tensor m = ag::tensor_scatter_nd_add(ag::zeros({2, 3}, ag::float64), ag::constant({{0, 1}, {1, 2}, {0, 1}}),
                                             ag::constant(std::vector<double>{1, 2, 3}));
  EXPECT_EQ(m.to_vector<double>(), (std::vector<double>{0, 4, 0, 0, 0, 2}));
  expect_error<ag::InvalidArgumentError>([&] { ag::tensor_scatter_nd_update(tensor, ag::constant(std::vector<int32_t>{8}, {1, 1}), ag::constant(std::vector<int32_t>{0})); },
                                         {"ag::tensor_scatter_nd_update", "every index must be in [0, dim)", "sort_scatter_test.cpp:"});
  expect_error<ag::ValueError>([&] { ag::tensor_scatter_nd_add(tensor, indices, ag::constant(std::vector<int32_t>{1, 2, 3})); },
                               {"ag::tensor_scatter_nd_add", "updates must have shape [4]"});
}

TEST(Scatter, UnsortedSegmentSumAndMax) {
  const Tensor c = ag::constant({{1, 2, 3, 4}, {5, 6, 7, 8}, {4, 3, 2, 1}});
  const Tensor ids = ag::constant(std::vector<int32_t>{0, 1, 0});
  EXPECT_EQ(ag::unsorted_segment_sum(c, ids, 2).to_vector<int32_t>(), (std::vector<int32_t>{5, 5, 5, 5, 5, 6, 7, 8}));
  EXPECT_EQ(ag::unsorted_segment_max(c, ids, 2).to_vector<int32_t>(), (std::vector<int32_t>{4, 3, 3, 4, 5, 6, 7, 8}));
  // A negative id is dropped; an empty segment sums to 0 and its max is the lowest value.
  const Tensor x = ag::constant(std::vector<float>{1, 2, 3, 4});
  const Tensor some = ag::constant(std::vector<int64_t>{2, -1, 0, 2});
  EXPECT_EQ(ag::unsorted_segment_sum(x, some, 4).to_vector<float>(), (std::vector<float>{3, 0, 5, 0}));
  EXPECT_EQ(ag::unsorted_segment_max(x, some, 4).to_vector<float>(), (std::vector<float>{3, -INFINITY, 4, -INFINITY}));
  EXPECT_EQ(ag::unsorted_segment_max(ag::constant(std::vector<int32_t>{1}), ag::constant(std::vector<int32_t>{1}), 2).to_vector<int32_t>(),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::lowest(), 1}));
  // Ids of rank 2 over data [2, 2, 3].
  const Tensor d = ag::reshape(ag::cast(ag::range(12), ag::float32), {2, 2, 3});
  EXPECT_EQ(ag::unsorted_segment_sum(d, ag::constant({{1, 0}, {1, 1}}), 2).to_vector<float>(), (std::vector<float>{3, 4, 5, 15, 18, 21}));
  expect_error<ag::InvalidArgumentError>([&] { ag::unsorted_segment_sum(x, some, 2); },
                                         {"ag::unsorted_segment_sum", "index 2 is out of range [0, 2)", "sort_scatter_test.cpp:"});
  expect_error<ag::ValueError>([&] { ag::unsorted_segment_sum(c, ag::constant(std::vector<int32_t>{0, 1}), 2); },
                               {"segment_ids' shape [2] must be a prefix of data's [3,4]"});
}

// Rows of 1 to 4 elements take a kernel of their own width (index_kernels.cpp, with_row_width);
// 5 the general one. Each against sums and maxima by definition, negative ids dropped, in index
// order (float sums of exact integers: any order would do, the kernel's is the ids').
TEST(Scatter, SegmentOpsOfEveryNarrowRowWidthMatchTheDefinition) {
  std::mt19937 gen(7);
  for (int64_t width = 1; width <= 5; ++width) {
    const int64_t rows = 300, segments = 6;
    std::vector<float> data(static_cast<size_t>(rows * width));
    std::vector<int32_t> ids(static_cast<size_t>(rows));
    for (float& v : data) v = static_cast<float>(std::uniform_int_distribution<int>(-50, 50)(gen));
    for (int32_t& id : ids) id = std::uniform_int_distribution<int32_t>(-1, static_cast<int32_t>(segments) - 1)(gen);
    std::vector<float> sums(static_cast<size_t>(segments * width), 0.0f), maxima(sums.size(), -INFINITY);
    for (int64_t r = 0; r < rows; ++r) {
      if (ids[static_cast<size_t>(r)] < 0) continue;
      for (int64_t e = 0; e < width; ++e) {
        const size_t to = static_cast<size_t>(ids[static_cast<size_t>(r)] * width + e);
        sums[to] += data[static_cast<size_t>(r * width + e)];
        maxima[to] = std::max(maxima[to], data[static_cast<size_t>(r * width + e)]);
      }
    }
    const Tensor x = ag::constant(data, {rows, width});
    const Tensor i = ag::constant(ids);
    EXPECT_EQ(ag::unsorted_segment_sum(x, i, segments).to_vector<float>(), sums) << "width " << width;
    EXPECT_EQ(ag::unsorted_segment_max(x, i, segments).to_vector<float>(), maxima) << "width " << width;
    EXPECT_EQ(ag::unsorted_segment_sum(ag::cast(x, ag::int64), ag::cast(i, ag::int64), segments).to_vector<int64_t>(),
              ag::cast(ag::constant(sums, {segments, width}), ag::int64).to_vector<int64_t>())
        << "width " << width;
  }
}

// A brute-force einsum: every assignment of the labels, the product of the operands' elements.
std::vector<double> einsum_by_definition(const std::string& eq, const std::vector<Tensor>& xs, ag::Shape& out_shape) {
  const size_t arrow = eq.find("->");
  std::vector<std::string> terms;
  for (size_t pos = 0;;) {
    const size_t comma = eq.find(',', pos);
    terms.push_back(eq.substr(pos, std::min(comma, arrow) - pos));
    if (comma == std::string::npos || comma > arrow) break;
    pos = comma + 1;
  }
  const std::string out = eq.substr(arrow + 2);
  std::map<char, int64_t> size;
  for (size_t i = 0; i < xs.size(); ++i)
    for (size_t d = 0; d < terms[i].size(); ++d) size[terms[i][d]] = std::max(size[terms[i][d]], xs[i].shape()[static_cast<int64_t>(d)]);
  std::string labels;
  for (const auto& [c, n] : size) labels += c;
  out_shape = ag::Shape{};
  for (char c : out) out_shape.push_back(size[c]);
  std::vector<double> result(static_cast<size_t>(out_shape.num_elements()), 0.0);
  std::vector<std::vector<double>> values;
  for (const Tensor& x : xs) values.push_back(x.to_vector<double>());
  std::map<char, int64_t> at;
  std::function<void(size_t)> walk = [&](size_t k) {
    if (k == labels.size()) {
      double p = 1;
      for (size_t i = 0; i < xs.size(); ++i) {
        int64_t flat = 0;
        for (size_t d = 0; d < terms[i].size(); ++d) {
          const int64_t dim = xs[i].shape()[static_cast<int64_t>(d)];
          flat = flat * dim + (dim == 1 ? 0 : at[terms[i][d]]);  // a broadcast dim of size 1
        }
        p *= values[i][static_cast<size_t>(flat)];
      }
      int64_t o = 0;
      for (char c : out) o = o * size[c] + at[c];
      result[static_cast<size_t>(o)] += p;
      return;
    }
    for (at[labels[k]] = 0; at[labels[k]] < size[labels[k]]; ++at[labels[k]]) walk(k + 1);
  };
  walk(0);
  return result;
}

TEST(Einsum, AgainstTheDefinition) {
  struct Case {
    std::string eq;  // with the explicit output, for the reference
    std::vector<ag::Shape> shapes;
    std::string given;  // what is passed to ag::einsum ("" = eq)
  };
  const std::vector<Case> cases = {
      {"ij,jk->ik", {{2, 3}, {3, 4}}, ""},           {"ij,jk->ik", {{2, 3}, {3, 4}}, "ij,jk"},
      {"bij,bjk->bik", {{2, 2, 3}, {2, 3, 4}}, ""},  {"ij->ji", {{2, 3}}, ""},
      {"ij->", {{2, 3}}, ""},                          {"i,i->", {{4}, {4}}, ""},
      {"i,j->ij", {{2}, {3}}, ""},                     {"bhqd,bhkd->bhqk", {{2, 2, 3, 4}, {2, 2, 5, 4}}, ""},
      {"abc,cd->abd", {{2, 3, 4}, {4, 2}}, ""},        {"abc,bcd->ad", {{2, 3, 4}, {3, 4, 5}}, ""},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 2}}, ""},  {"ij,ik->jk", {{3, 2}, {3, 4}}, ""},
      {"xij,jk->xik", {{2, 2, 3}, {3, 2}}, "...ij,jk->...ik"},
      {"xyij,yjk->xyik", {{2, 1, 2, 3}, {3, 3, 2}}, "...ij,...jk->...ik"},
      {"ijk->kj", {{2, 3, 4}}, ""},                    {"ab,ab->ab", {{2, 3}, {2, 3}}, ""},
      // Diagonals: a label repeated within an operand.
      {"ii->i", {{3, 3}}, ""},                         {"ii->", {{3, 3}}, "ii"},
      {"bii->bi", {{2, 3, 3}}, ""},                    {"iij,jk->ik", {{3, 3, 2}, {2, 4}}, ""},
      {"iii->i", {{2, 2, 2}}, ""},                     {"ij,jj->i", {{2, 3}, {3, 3}}, ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.given.empty() ? c.eq : c.given);
    std::vector<Tensor> xs;
    for (size_t i = 0; i < c.shapes.size(); ++i) xs.push_back(agtest::random_values(c.shapes[i], static_cast<uint32_t>(i + 7)));
    ag::Shape want_shape;
    const std::vector<double> want = einsum_by_definition(c.eq, xs, want_shape);
    const Tensor got = ag::einsum(c.given.empty() ? c.eq : c.given, xs);
    ASSERT_EQ(got.shape(), want_shape);
    const std::vector<double> g = got.to_vector<double>();
    for (size_t k = 0; k < want.size(); ++k) EXPECT_NEAR(g[k], want[k], 1e-12) << k;
  }
}

TEST(Einsum, ErrorsNameTheEquation) {
  const Tensor a = ag::ones({2, 3}), b = ag::ones({3, 4});
  expect_error<ag::ValueError>([&] { ag::einsum("ij,jk->ik", {a}); }, {"ag::einsum", "has 2 operand terms for 1 operands", "sort_scatter_test.cpp:"});
  expect_error<ag::ValueError>([&] { ag::einsum("ii->i", {ag::ones({3, 4})}); },
                               {"label 'i' names dims of sizes 3 and 4 (a diagonal needs them equal)"});
  expect_error<ag::ValueError>([&] { ag::einsum("ij,jk->iz", {a, b}); }, {"output label 'z' is in no operand"});
  expect_error<ag::ValueError>([&] { ag::einsum("ijk,jk->i", {a, b}); }, {"term 'ijk' names 3 dims, operand 0 has shape [2,3]"});
  expect_error<ag::ValueError>([&] { ag::einsum("ij,jk->ik", {a, ag::ones({4, 4})}); }, {"ag::matmul"});
}

}  // namespace
