// Text forms: Tensor::str() and the fmt formatters (TensorFlow's "tf.Tensor(..., shape=...,
// dtype=...)", long tensors elided), and ag::print (tf.print's format, one sink call per print).
#include <fmt/format.h>

#include "ag/print.h"
#include "test_util.h"

namespace {

TEST(Str, VectorsScalarsAndDtypes) {
  EXPECT_EQ(ag::constant({1, 2}).str(), "tf.Tensor([1 2], shape=(2,), dtype=int32)");
  EXPECT_EQ(ag::constant({int64_t{-3}}).str(), "tf.Tensor([-3], shape=(1,), dtype=int64)");
  EXPECT_EQ(ag::Tensor(5).str(), "tf.Tensor(5, shape=(), dtype=int32)");
  EXPECT_EQ(ag::constant({1.f, 2.5f}).str(), "tf.Tensor([1. 2.5], shape=(2,), dtype=float32)");
  EXPECT_EQ(ag::constant({0.1}).str(), "tf.Tensor([0.1], shape=(1,), dtype=float64)");
  // A scalar float prints like a NumPy scalar (2.0), an element of an array like NumPy's (2.).
  EXPECT_EQ(ag::Tensor(2.f).str(), "tf.Tensor(2.0, shape=(), dtype=float32)");
  EXPECT_EQ(ag::Tensor(0.5).str(), "tf.Tensor(0.5, shape=(), dtype=float64)");
  EXPECT_EQ(ag::constant({true, false}).str(), "tf.Tensor([True False], shape=(2,), dtype=bool)");
  EXPECT_EQ(ag::Tensor(true).str(), "tf.Tensor(True, shape=(), dtype=bool)");
  EXPECT_EQ(ag::constant({NAN, INFINITY, -INFINITY}).str(),
            "tf.Tensor([nan inf -inf], shape=(3,), dtype=float32)");
  EXPECT_EQ(ag::Tensor().str(), "Tensor(<no value>)");
}

TEST(Str, MatricesStartOnANewLineLikeTensorFlow) {
  EXPECT_EQ(ag::constant({{1, 2}, {3, 4}}).str(), "tf.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)");
  EXPECT_EQ(ag::constant({{1, 2}}).str(), "tf.Tensor([[1 2]], shape=(1, 2), dtype=int32)");
  // Between 2-D blocks of a 3-D tensor: a blank line, as NumPy prints.
  EXPECT_EQ(ag::reshape(ag::range(8), {2, 2, 2}).str(),
            "tf.Tensor(\n[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]], shape=(2, 2, 2), dtype=int32)");
}

TEST(Str, EmptyTensors) {
  EXPECT_EQ(ag::zeros({0}).str(), "tf.Tensor([], shape=(0,), dtype=float32)");
  EXPECT_EQ(ag::zeros({2, 0}, ag::int32).str(), "tf.Tensor([], shape=(2, 0), dtype=int32)");
}

TEST(Str, LongTensorsAreElided) {
  // NumPy's threshold: more than 1000 elements are summarized to 3 at each edge.
  EXPECT_EQ(ag::range(1001).str(), "tf.Tensor([0 1 2 ... 998 999 1000], shape=(1001,), dtype=int32)");
  const std::string full = ag::range(1000).str();
  EXPECT_NE(full.find(" 500 "), std::string::npos);
  EXPECT_EQ(full.find("..."), std::string::npos);
  const std::string m = ag::reshape(ag::range(2000), {100, 20}).str();
  EXPECT_TRUE(m.starts_with("tf.Tensor(\n[[0 1 2 ... 17 18 19]\n [20 21 22 ... 37 38 39]\n")) << m;
  EXPECT_NE(m.find("\n ...\n [1940 1941 1942 ... 1957 1958 1959]"), std::string::npos) << m;
  EXPECT_NE(m.find("[1980 1981 1982 ... 1997 1998 1999]], shape=(100, 20)"), std::string::npos) << m;
}

TEST(Format, FmtFormattersForTensorDTypeAndShape) {
  EXPECT_EQ(fmt::format("{}", ag::constant({1, 2})), "tf.Tensor([1 2], shape=(2,), dtype=int32)");
  EXPECT_EQ(fmt::format("{}", ag::float64), "float64");
  EXPECT_EQ(fmt::format("{} {}", ag::bool_, ag::int64), "bool int64");
  EXPECT_EQ(fmt::format("{}", ag::Shape{2, 3}), "(2, 3)");
  EXPECT_EQ(fmt::format("{}", ag::Shape{7}), "(7,)");
  EXPECT_EQ(fmt::format("[{:>8}]", ag::int32), "[   int32]");  // format specs pass through
}

// Captures ag::print output and counts sink calls.
class PrintCapture : public ::testing::Test {
 protected:
  void SetUp() override {
    ag::set_print_sink([this](std::string_view s) {
      lines.emplace_back(s);
    });
  }
  void TearDown() override { ag::set_print_sink(nullptr); }
  std::vector<std::string> lines;
};

TEST_F(PrintCapture, ValuesLikeTfPrint) {
  ag::print(ag::constant({1, 2, 3}));
  ag::print(ag::Tensor(5));
  ag::print(ag::constant({{1, 2}, {3, 4}}));
  ag::print(ag::constant({1.f, 2.5f}));
  ag::print(ag::constant({true, false}));
  ag::print(ag::Tensor(2.0));
  ag::print(ag::zeros({0}));
  ag::print(ag::reshape(ag::range(8), {2, 2, 2}));
  EXPECT_EQ(lines, (std::vector<std::string>{"[1 2 3]\n", "5\n", "[[1 2]\n [3 4]]\n", "[1 2.5]\n", "[1 0]\n",
                                              "2\n", "[]\n", "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]\n"}));
}

TEST_F(PrintCapture, ArgumentsAreSeparatedByOneSpace) {
  const std::string name = "x";
  ag::print("value of", name, "is", ag::constant({1, 2}), 3, 2.5, true, std::string_view("end"));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "value of x is [1 2] 3 2.5 1 end\n");
  ag::print();
  ag::print("");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], "\n");
  EXPECT_EQ(lines[2], "\n");
}

TEST_F(PrintCapture, LongTensorsAreSummarizedTo3PerEdge) {
  ag::print(ag::range(6));
  ag::print(ag::range(7));
  ag::print(ag::reshape(ag::range(100), {10, 10}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "[0 1 2 3 4 5]\n");
  EXPECT_EQ(lines[1], "[0 1 2 ... 4 5 6]\n");
  EXPECT_EQ(lines[2],
            "[[0 1 2 ... 7 8 9]\n [10 11 12 ... 17 18 19]\n [20 21 22 ... 27 28 29]\n ...\n [70 71 72 ... 77 78 79]\n"
            " [80 81 82 ... 87 88 89]\n [90 91 92 ... 97 98 99]]\n");
}

TEST_F(PrintCapture, ValuelessTensorIsAnError) {
  AG_EXPECT_ERROR(ag::ValueError, ag::print("x", ag::Tensor()), "ag::print", "no value");
  EXPECT_TRUE(lines.empty());
}

TEST(Print, NullSinkRestoresStdout) {
  std::vector<std::string> got;
  ag::set_print_sink([&](std::string_view s) { got.emplace_back(s); });
  ag::set_print_sink(nullptr);
  ::testing::internal::CaptureStdout();
  ag::print("to stdout", ag::constant({7}));
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(out, "to stdout [7]\n");
  EXPECT_TRUE(got.empty());
}

}  // namespace
