// The op list: one X-macro row per op (name, class). Everything that switches on ops — shape
// rules, eager kernels, graph text, JIT lowering — starts from this table.
#pragma once

#include <cstdint>
#include <string_view>

namespace ag {

enum class OpClass : uint8_t {
  Source,      // no tensor inputs, or inputs that only parameterize a constant-like result
  Unary,       // elementwise, result dtype = input dtype (numeric)
  UnaryFloat,  // elementwise, floating point only
  UnaryBool,   // elementwise on bool
  Cast,        // elementwise dtype conversion
  Binary,      // elementwise arithmetic with broadcasting
  Compare,     // elementwise, broadcasting, bool result
  Logical,     // elementwise on bool, broadcasting
  Select,      // where(cond, x, y)
  Reduce,      // reduce over axes
  ArgReduce,   // argmax / argmin over one axis
  MatMul,
  Layout,      // transpose, reshape, concat, slice, gather, expand_dims, squeeze, shape_of
  Stateful,    // side effects and state: print, assert, variables, random generators
  List,        // TensorArray ops
  Control,     // If / While
};

// X(Name, Class, Stateful)
#define AG_OP_LIST(X)                    \
  X(Const, Source, false)                \
  X(Placeholder, Source, false)          \
  X(Range, Source, false)                \
  X(Fill, Source, false)                 \
  X(FillLike, Source, false)             \
  X(Identity, Unary, false)              \
  X(Neg, Unary, false)                   \
  X(Abs, Unary, false)                   \
  X(Square, Unary, false)                \
  X(Relu, Unary, false)                  \
  X(Sign, Unary, false)                  \
  X(Exp, UnaryFloat, false)              \
  X(Log, UnaryFloat, false)              \
  X(Sqrt, UnaryFloat, false)             \
  X(Tanh, UnaryFloat, false)             \
  X(Sigmoid, UnaryFloat, false)          \
  X(Sin, UnaryFloat, false)              \
  X(Cos, UnaryFloat, false)              \
  X(Floor, UnaryFloat, false)            \
  X(Ceil, UnaryFloat, false)             \
  X(Round, UnaryFloat, false)            \
  X(LogicalNot, UnaryBool, false)        \
  X(Cast, Cast, false)                   \
  X(Add, Binary, false)                  \
  X(Sub, Binary, false)                  \
  X(Mul, Binary, false)                  \
  X(Div, Binary, false)                  \
  X(Mod, Binary, false)                  \
  X(Pow, Binary, false)                  \
  X(Maximum, Binary, false)              \
  X(Minimum, Binary, false)              \
  X(FloorDiv, Binary, false)             \
  X(FloorMod, Binary, false)             \
  X(Less, Compare, false)                \
  X(LessEqual, Compare, false)           \
  X(Greater, Compare, false)             \
  X(GreaterEqual, Compare, false)        \
  X(Equal, Compare, false)               \
  X(NotEqual, Compare, false)            \
  X(LogicalAnd, Logical, false)          \
  X(LogicalOr, Logical, false)           \
  X(LogicalXor, Logical, false)          \
  X(Select, Select, false)               \
  X(ReduceSum, Reduce, false)            \
  X(ReduceMean, Reduce, false)           \
  X(ReduceMax, Reduce, false)            \
  X(ReduceMin, Reduce, false)            \
  X(ReduceProd, Reduce, false)           \
  X(ReduceAny, Reduce, false)            \
  X(ReduceAll, Reduce, false)            \
  X(ArgMax, ArgReduce, false)            \
  X(ArgMin, ArgReduce, false)            \
  X(MatMul, MatMul, false)               \
  X(Transpose, Layout, false)            \
  X(Reshape, Layout, false)              \
  X(Concat, Layout, false)               \
  X(Slice, Layout, false)                \
  X(Gather, Layout, false)               \
  X(ExpandDims, Layout, false)           \
  X(Squeeze, Layout, false)              \
  X(ShapeOf, Layout, false)              \
  X(Print, Stateful, true)               \
  X(Assert, Stateful, true)              \
  X(ReadVariable, Stateful, true)        \
  X(AssignVariable, Stateful, true)      \
  X(AssignAddVariable, Stateful, true)   \
  X(AssignSubVariable, Stateful, true)   \
  X(RandomUniform, Stateful, true)       \
  X(RandomNormal, Stateful, true)        \
  X(ListWrite, List, false)              \
  X(ListRead, List, false)               \
  X(ListStack, List, false)              \
  X(ListSize, List, false)               \
  X(If, Control, false)                  \
  X(While, Control, false)

enum class OpKind : uint16_t {
#define AG_OP_ENUM(name, cls, stateful) name,
  AG_OP_LIST(AG_OP_ENUM)
#undef AG_OP_ENUM
};

inline constexpr int kNumOps = 0
#define AG_OP_COUNT(name, cls, stateful) +1
    AG_OP_LIST(AG_OP_COUNT)
#undef AG_OP_COUNT
    ;

struct OpInfo {
  std::string_view name;
  OpClass cls;
  // Side effect or state access: never pruned, never merged by CSE, never reordered against
  // other stateful ops. If/While are stateful when a sub-graph is (see graph/analysis.h).
  bool stateful;
};

const OpInfo& op_info(OpKind op);
inline std::string_view op_name(OpKind op) { return op_info(op).name; }
inline OpClass op_class(OpKind op) { return op_info(op).cls; }
bool is_elementwise(OpKind op);

}  // namespace ag
