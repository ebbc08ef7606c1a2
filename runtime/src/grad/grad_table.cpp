// The gradient rule of each op, from ops.def's Gradient column.
#include <string_view>

#include "rules.h"

namespace ag::detail {

GradRule grad_rule(OpKind op) {
  static constexpr GradRule table[] = {
#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Jit, Gradient, Api, ApiName) \
  std::string_view(#Gradient) == "none" ? nullptr : &grad_##Gradient,
#include "ag/graph/ops.def"
  };
  return table[static_cast<int>(op)];
}

}  // namespace ag::detail
