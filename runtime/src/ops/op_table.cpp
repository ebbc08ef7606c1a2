// The op table: names and classes from AG_OP_LIST, user-facing names for messages.
#include "ag/detail/ops_internal.h"
#include "ag/graph/op.h"

namespace ag {

const OpInfo& op_info(OpKind op) {
  static const OpInfo table[] = {
#define AG_OP_INFO(name, cls, stateful) {#name, OpClass::cls, stateful},
      AG_OP_LIST(AG_OP_INFO)
#undef AG_OP_INFO
  };
  return table[static_cast<int>(op)];
}

bool is_elementwise(OpKind op) {
  switch (op_class(op)) {
    case OpClass::Unary:
    case OpClass::UnaryFloat:
    case OpClass::UnaryBool:
    case OpClass::Cast:
    case OpClass::Binary:
    case OpClass::Compare:
    case OpClass::Logical:
    case OpClass::Select: return true;
    default: return false;
  }
}

const Attrs& Attrs::none() {
  static const Attrs a;
  return a;
}

namespace detail {

const char* user_op_name(OpKind op) {
  switch (op) {
    case OpKind::Const: return "ag::constant";
    case OpKind::Placeholder: return "placeholder";
    case OpKind::Range: return "ag::range";
    case OpKind::Fill: return "ag::fill";
    case OpKind::FillLike: return "ag::zeros_like/ones_like";
    case OpKind::Identity: return "ag::identity";
    case OpKind::Neg: return "operator- (ag::neg)";
    case OpKind::Abs: return "ag::abs";
    case OpKind::Square: return "ag::square";
    case OpKind::Relu: return "ag::relu";
    case OpKind::Sign: return "ag::sign";
    case OpKind::Exp: return "ag::exp";
    case OpKind::Log: return "ag::log";
    case OpKind::Sqrt: return "ag::sqrt";
    case OpKind::Tanh: return "ag::tanh";
    case OpKind::Sigmoid: return "ag::sigmoid";
    case OpKind::Sin: return "ag::sin";
    case OpKind::Cos: return "ag::cos";
    case OpKind::Floor: return "ag::floor";
    case OpKind::Ceil: return "ag::ceil";
    case OpKind::Round: return "ag::round";
    case OpKind::LogicalNot: return "ag::logical_not";
    case OpKind::Cast: return "ag::cast";
    case OpKind::Add: return "operator+ (ag::add)";
    case OpKind::Sub: return "operator- (ag::subtract)";
    case OpKind::Mul: return "operator* (ag::multiply)";
    case OpKind::Div: return "operator/ (ag::divide)";
    case OpKind::Mod: return "operator%";
    case OpKind::Pow: return "ag::pow";
    case OpKind::Maximum: return "ag::maximum";
    case OpKind::Minimum: return "ag::minimum";
    case OpKind::FloorDiv: return "ag::floordiv";
    case OpKind::FloorMod: return "ag::floormod";
    case OpKind::Less: return "operator< (ag::less)";
    case OpKind::LessEqual: return "operator<= (ag::less_equal)";
    case OpKind::Greater: return "operator> (ag::greater)";
    case OpKind::GreaterEqual: return "operator>= (ag::greater_equal)";
    case OpKind::Equal: return "operator== (ag::equal)";
    case OpKind::NotEqual: return "operator!= (ag::not_equal)";
    case OpKind::LogicalAnd: return "operator& (ag::logical_and)";
    case OpKind::LogicalOr: return "operator| (ag::logical_or)";
    case OpKind::LogicalXor: return "operator^ (ag::logical_xor)";
    case OpKind::Select: return "ag::where";
    case OpKind::ReduceSum: return "ag::reduce_sum";
    case OpKind::ReduceMean: return "ag::reduce_mean";
    case OpKind::ReduceMax: return "ag::reduce_max";
    case OpKind::ReduceMin: return "ag::reduce_min";
    case OpKind::ReduceProd: return "ag::reduce_prod";
    case OpKind::ReduceAny: return "ag::reduce_any";
    case OpKind::ReduceAll: return "ag::reduce_all";
    case OpKind::ArgMax: return "ag::argmax";
    case OpKind::ArgMin: return "ag::argmin";
    case OpKind::MatMul: return "ag::matmul";
    case OpKind::Transpose: return "ag::transpose";
    case OpKind::Reshape: return "ag::reshape";
    case OpKind::Concat: return "ag::concat";
    case OpKind::Slice: return "ag::slice";
    case OpKind::Gather: return "ag::gather";
    case OpKind::ExpandDims: return "ag::expand_dims";
    case OpKind::Squeeze: return "ag::squeeze";
    case OpKind::ShapeOf: return "ag::shape_of";
    case OpKind::Print: return "ag::print";
    case OpKind::Assert: return "ag::assert_true";
    case OpKind::ReadVariable: return "Variable::value";
    case OpKind::AssignVariable: return "Variable::assign";
    case OpKind::AssignAddVariable: return "Variable::assign_add";
    case OpKind::AssignSubVariable: return "Variable::assign_sub";
    case OpKind::RandomUniform: return "Generator::uniform";
    case OpKind::RandomNormal: return "Generator::normal";
    case OpKind::ListWrite: return "TensorArray::write";
    case OpKind::ListRead: return "TensorArray::read";
    case OpKind::ListStack: return "TensorArray::stack";
    case OpKind::ListSize: return "TensorArray::size";
    case OpKind::If: return "if";
    case OpKind::While: return "while";
  }
  return "?";
}

std::string at(SourceLoc loc) { return loc.known() ? " (at " + loc.str() + ")" : ""; }

}  // namespace detail
}  // namespace ag
