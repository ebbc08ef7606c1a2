// Type inference: each op's result dtype and static shape from its inputs' (unknown dims
// allowed). The arity comes from ops.def, the rule from the op's family file in type_rules/.
#include "type_rules/type_rules.h"

namespace ag::detail {

[[noreturn]] void type_error(OpKind op, SourceLoc loc, const std::string& msg) {
  throw TypeError(fmt::format("{}: {}{}", user_op_name(op), msg, at(loc)));
}
[[noreturn]] void value_error(OpKind op, SourceLoc loc, const std::string& msg) {
  throw ValueError(fmt::format("{}: {}{}", user_op_name(op), msg, at(loc)));
}

std::string describe(const TensorType& t) { return fmt::format("{}{}", dtype_name(t.dtype), t.shape.str()); }

void require_numeric(OpKind op, const TensorType& t, const char* which, SourceLoc loc) {
  if (!is_numeric(t.dtype))
    type_error(op, loc, fmt::format("{} must be a numeric tensor, got {}", which, describe(t)));
}

void require_same_dtype(OpKind op, const TensorType& a, const TensorType& b, SourceLoc loc) {
  if (a.dtype != b.dtype)
    type_error(op, loc,
               fmt::format("the operands have different dtypes: {} (left) and {} (right); use ag::cast to convert "
                           "one of them",
                           describe(a), describe(b)));
}

namespace {
int64_t join_dim(int64_t a, int64_t b) { return a == b ? a : Shape::kUnknown; }
}  // namespace

int64_t normalize_axis(int64_t axis, int64_t rank, OpKind op, SourceLoc loc) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    value_error(op, loc, fmt::format("axis {} is out of range for a tensor of rank {}", axis, rank));
  return a;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, OpKind op, SourceLoc loc) {
  if (a == b) return a;  // the common case, and the eager hot path
  const int64_t rank = std::max(a.rank(), b.rank());
  Shape out;
  out.resize(rank);
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t ai = i - (rank - a.rank()), bi = i - (rank - b.rank());
    const int64_t da = ai >= 0 ? a[ai] : 1, db = bi >= 0 ? b[bi] : 1;
    int64_t d;
    if (da == db) d = da;
    else if (da == 1) d = db;
    else if (db == 1) d = da;
    else if (da < 0) d = db;
    else if (db < 0) d = da;
    else
      value_error(op, loc, fmt::format("shapes {} and {} are not broadcast-compatible (dim {} is {} vs {})",
                                       a.str(), b.str(), i, da, db));
    out[i] = d;
  }
  return out;
}

TensorType type_rule_given(OpKind op, std::span<const TensorType>, const Attrs&, SourceLoc loc) {
  throw InternalError(fmt::format("{} has no type rule: its type is given (a spec, or its sub-graphs){}", op_name(op),
                                  at(loc)));
}

TensorType infer_type(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const int arity = op_info(op).arity;
  if (arity >= 0 && in.size() != static_cast<size_t>(arity))
    throw InternalError(fmt::format("{} expects {} inputs, got {}{}", op_name(op), arity, in.size(), at(loc)));
  switch (op) {
#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Jit, Gradient, Api, ApiName) \
  case OpKind::Name: return type_rule_##TypeRule(op, in, attrs, loc);
#include "ag/graph/ops.def"
  }
  throw InternalError(fmt::format("no type rule for op {}", static_cast<int>(op)));
}


TensorType join_types(const TensorType& a, const TensorType& b) {
  if (a.is_untyped_list()) return b;  // an untyped list fits any element shape
  if (b.is_untyped_list()) return a;
  TensorType out = a;
  if (a.shape.rank() != b.shape.rank()) throw InternalError("join_types: ranks differ");
  for (int64_t i = 0; i < a.shape.rank(); ++i) out.shape[i] = join_dim(a.shape[i], b.shape[i]);
  return out;
}

}  // namespace ag::detail
