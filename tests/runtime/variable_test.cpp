// ag::Variable eagerly: value/read_value, assign/assign_add/assign_sub, and the dtype and shape
// errors that keep a Variable's type fixed.
#include "ag/variable.h"

#include "test_util.h"

namespace {

TEST(Variable, ConstructionAndReads) {
  ag::Variable v(ag::constant({1.f, 2.f}), "weights");
  EXPECT_EQ(v.name(), "weights");
  EXPECT_EQ(v.dtype(), ag::float32);
  EXPECT_EQ(v.shape(), (ag::Shape{2}));
  EXPECT_EQ(v.value().to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(v.read_value().to_vector<float>(), (std::vector<float>{1, 2}));
  const ag::Tensor t = v;  // reads like a tensor
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ((v + 1).to_vector<float>(), (std::vector<float>{2, 3}));
  EXPECT_EQ(ag::add(v, v).to_vector<float>(), (std::vector<float>{2, 4}));
  ag::Variable s(3);
  EXPECT_EQ(s.dtype(), ag::int32);
  EXPECT_EQ(s.value().rank(), 0);
  EXPECT_EQ(s.name(), "");
  AG_EXPECT_ERROR(ag::ValueError, ag::Variable(ag::Tensor()), "ag::Variable", "no value");
}

TEST(Variable, AssignmentsReturnAndKeepTheNewValue) {
  ag::Variable v(ag::constant({1, 2, 3}));
  EXPECT_EQ(v.assign(ag::constant({4, 5, 6})).to_vector<int32_t>(), (std::vector<int32_t>{4, 5, 6}));
  EXPECT_EQ(v.assign_add(ag::constant({1, 1, 1})).to_vector<int32_t>(), (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(v.assign_sub(2).to_vector<int32_t>(), (std::vector<int32_t>{3, 4, 5}));
  EXPECT_EQ(v.value().to_vector<int32_t>(), (std::vector<int32_t>{3, 4, 5}));
  // A scalar is broadcast over the Variable's shape.
  EXPECT_EQ(v.assign(9).to_vector<int32_t>(), (std::vector<int32_t>{9, 9, 9}));
  EXPECT_EQ(v.shape(), (ag::Shape{3}));
  ag::Variable m(ag::zeros({2, 3}));
  m.assign_add(ag::constant({1.f, 2.f, 3.f}));  // a broadcast row
  EXPECT_EQ(m.value().to_vector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  m.assign_sub(0.5);  // a double scalar is weak: the Variable stays float32
  EXPECT_EQ(m.dtype(), ag::float32);
  EXPECT_EQ(m.value().to_vector<float>(), (std::vector<float>{0.5f, 1.5f, 2.5f, 0.5f, 1.5f, 2.5f}));
  ag::Variable w(ag::Tensor(1.5));
  w.assign(v.value()[0] > 3 ? 1.0 : 2.0);  // plain values are fine
  EXPECT_EQ(w.value().item<double>(), 1.0);
  ag::Variable b(ag::constant({true, false}));
  b.assign(true);
  EXPECT_EQ(b.value().to_vector<bool>(), (std::vector<bool>{true, true}));
}

TEST(Variable, DtypeErrorsNameTheVariableAndBothDtypes) {
  ag::Variable v(ag::constant({1.f, 2.f}), "w");
  AG_EXPECT_ERROR(ag::TypeError, v.assign(ag::constant({1, 2})), "Variable::assign", "'w'", "float32", "int32");
  AG_EXPECT_ERROR(ag::TypeError, v.assign_add(ag::constant({1.0, 2.0})), "Variable::assign_add", "'w'", "float64");
  AG_EXPECT_ERROR(ag::TypeError, v.assign(true), "Variable::assign", "'w'", "bool");
  ag::Variable i(ag::constant({1, 2}), "counter");
  AG_EXPECT_ERROR(ag::TypeError, i.assign_add(0.5), "Variable::assign_add", "'counter'", "0.5");
  AG_EXPECT_ERROR(ag::TypeError, i.assign(false), "Variable::assign", "'counter'", "bool");
  ag::Variable b(ag::constant({true}), "flag");
  AG_EXPECT_ERROR(ag::TypeError, b.assign(1), "Variable::assign", "'flag'", "bool");
  AG_EXPECT_ERROR(ag::TypeError, b.assign_add(ag::constant({true})), "Variable::assign_add", "'flag'", "numeric");
  // Failed assignments leave the value alone.
  EXPECT_EQ(v.value().to_vector<float>(), (std::vector<float>{1, 2}));
  EXPECT_EQ(i.value().to_vector<int32_t>(), (std::vector<int32_t>{1, 2}));
}

TEST(Variable, ShapeErrorsNameBothShapes) {
  ag::Variable v(ag::zeros({2, 3}), "w");
  AG_EXPECT_ERROR(ag::ValueError, v.assign(ag::zeros({3, 2})), "Variable::assign", "'w'", "[2,3]", "[3,2]");
  AG_EXPECT_ERROR(ag::ValueError, v.assign(ag::zeros({3})), "Variable::assign", "[2,3]", "[3]");
  AG_EXPECT_ERROR(ag::ValueError, v.assign_add(ag::zeros({2, 2, 3})), "Variable::assign_add", "[2,3]", "[2,2,3]");
  AG_EXPECT_ERROR(ag::ValueError, v.assign_sub(ag::zeros({4})), "Variable::assign_sub", "[2,3]", "[4]");
  EXPECT_EQ(v.shape(), (ag::Shape{2, 3}));
  EXPECT_EQ(v.value().to_vector<float>(), std::vector<float>(6, 0.f));
}

TEST(Variable, CopiesShareState) {
  ag::Variable a(ag::Tensor(1));
  ag::Variable b = a;
  b.assign_add(41);
  EXPECT_EQ(a.value().item<int>(), 42);
}

}  // namespace
