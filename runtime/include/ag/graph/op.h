// Ops: the OpKind enum, kernel families and per-op facts, all from the table in ops.def.
#pragma once

#include <cstdint>
#include <string>
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
  Scan,        // a running sum or product along one axis (cumsum, cumprod)
  Select,      // where(cond, x, y)
  Check,       // check_numerics: passes a float tensor through, raising on NaN or Inf (fused like an elementwise op)
  Reduce,      // reduce over axes
  ArgReduce,   // argmax / argmin over one axis
  MatMul,
  Window,      // sliding windows over NHWC data: convolutions and pooling
  Index,       // argsort, take_along_axis, scatters and segment reductions by index tensors
  Layout,      // transpose, reshape, concat, slice, gather, expand_dims, squeeze, shape_of
  Stateful,    // side effects and state: print, assert, variables, random generators
  List,        // TensorArray ops
  Control,     // If / While
};

// When an op may raise at run time on inputs that fit its type rule (ops.def's Raises column).
enum class RaiseKind : uint8_t {
  never,
  dims,        // only when a run-time dim disagrees (never when every input shape is static)
  values,      // on some values: an index out of range, an empty arg-reduction
  int_values,  // on some values of integer dtype (division by zero, a negative power), else as dims
};

// What computing an op costs (ops.def's Cost column).
enum class OpCost : uint8_t {
  view,    // nothing: its result is its input's data seen another way
  cheap,   // an instruction or two per element: recomputed rather than stored
  costly,  // the rest
};

// Whether the JIT's scalar form of an op is the same IR on vectors (ops.def's Vector column);
// mvec: a libm function whose vectors call glibc's libmvec variant of the register's width.
enum class VectorForm : uint8_t { no, yes, f32, mvec };

enum class OpKind : uint16_t {
#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Raises, Cost, Vector, Gradient, Api, ApiName, Equivalent) Name,
#include "ag/graph/ops.def"
};

inline constexpr int kNumOps = 0
#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Raises, Cost, Vector, Gradient, Api, ApiName, Equivalent) +1
#include "ag/graph/ops.def"
    ;

// One row of ops.def (see there for what each column means).
struct OpInfo {
  std::string_view name;
  std::string_view user_name;
  OpClass cls;  // the kernel family
  int8_t arity;
  // Side effect or state access: never pruned, never merged by CSE, never reordered against
  // other stateful ops. If/While count as stateful when a sub-graph has side effects
  // (has_side_effects, graph/passes/prune.cpp).
  bool stateful;
  RaiseKind raises;
  OpCost cost;
  VectorForm vector;
  bool differentiable;  // a gradient flows through it (its Gradient rule is not `none`)
  std::string_view type_rule, gradient;  // the rules' names (ops.def's columns)
  std::string_view equivalent;           // TensorFlow's / NumPy's name for it
};

const OpInfo& op_info(OpKind op);
// docs/ops.md: the op table as a Markdown page (ops/op_reference.cpp).
std::string op_reference_markdown();
inline std::string_view op_name(OpKind op) { return op_info(op).name; }
inline OpClass op_class(OpKind op) { return op_info(op).cls; }
bool is_elementwise(OpKind op);

}  // namespace ag
