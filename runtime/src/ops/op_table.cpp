// The op table (ops.def) as data: names, user-facing names, kernel families, per-op facts.
#include "ag/detail/ops_internal.h"
#include "ag/graph/op.h"

namespace ag {

const OpInfo& op_info(OpKind op) {
  static const OpInfo table[] = {
#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Raises, Cost, Vector, Gradient, Api, ApiName, Equivalent) \
  {#Name, UserName, OpClass::Kernel, Arity, Stateful, RaiseKind::Raises, OpCost::Cost, VectorForm::Vector, \
   std::string_view(#Gradient) != "none", #TypeRule, #Gradient, Equivalent},
#include "ag/graph/ops.def"
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
    case OpClass::Select:
    case OpClass::Check: return true;
    case OpClass::Source:
    case OpClass::Reduce:
    case OpClass::Scan:
    case OpClass::ArgReduce:
    case OpClass::MatMul:
    case OpClass::Window:
    case OpClass::Index:
    case OpClass::Layout:
    case OpClass::Stateful:
    case OpClass::List:
    case OpClass::Control: return false;
  }
  return false;
}

namespace detail {

bool runs_on_storage_dtypes(OpKind op) {
  switch (op) {
    case OpKind::Const:
    case OpKind::Placeholder:
    case OpKind::Fill:
    case OpKind::FillLike:
    case OpKind::Identity:
    case OpKind::StopGradient:
    case OpKind::Cast:
    case OpKind::Select: return true;
    default: break;
  }
  switch (op_class(op)) {
    case OpClass::Layout:    // moves elements
    case OpClass::Stateful:  // stores, prints, asserts; assign_add refuses them (its type rule)
    case OpClass::List:
    case OpClass::Control: return true;
    default: return false;
  }
}

}  // namespace detail

const Attrs& Attrs::none() {
  static const Attrs a;
  return a;
}

namespace detail {

const char* user_op_name(OpKind op) { return op_info(op).user_name.data(); }

std::string at(SourceLoc loc) { return loc.known() ? " (at " + loc.str() + ")" : ""; }

}  // namespace detail
}  // namespace ag
