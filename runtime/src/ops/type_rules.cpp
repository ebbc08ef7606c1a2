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

std::string describe(const TensorType& t) {
  return fmt::format("{}{}", dtype_name(t.dtype), t.has_unknown_rank() ? "[*]" : t.shape.str());
}

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

namespace {

[[noreturn]] void unknown_rank_error(OpKind op, size_t operand, const TensorType& t, SourceLoc loc) {
  value_error(op, loc, fmt::format("needs a tensor of known rank, but operand {} is {}, whose rank is known only at "
                                   "run time (an unknown-rank TensorSpec, or a staged if whose branches give it "
                                   "different ranks); give it a rank with ag::ensure_shape or ag::reshape",
                                   operand, describe(t)));
}

// Whether an op's result type follows from inputs of unknown rank (TensorFlow's TensorShape(None)):
// elementwise ops keep the rank unknown, a reshape gives its new shape, shape_of a vector. The
// others index dims by number (axes, permutations, slices) and need the rank.
bool accepts_unknown_rank(OpKind op) {
  return is_elementwise(op) || op == OpKind::FillLike || op == OpKind::Reshape || op == OpKind::ShapeOf ||
         op == OpKind::EnsureShape || op == OpKind::Print || op == OpKind::Assert;
}

TensorType infer_type_unknown_rank(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  size_t which = 0;
  while (!in[which].has_unknown_rank()) ++which;
  if (!accepts_unknown_rank(op)) unknown_rank_error(op, which, in[which], loc);
  if (op == OpKind::ShapeOf) return {DType::Int64, Shape{Shape::kUnknown}};
  if (op == OpKind::EnsureShape) return {in[0].dtype, attrs.shape};
  // The rule itself checks dtypes with each unknown-rank operand standing in as a scalar (which
  // broadcasts against anything); a reshape's element count is then unknown.
  std::vector<TensorType> stand_in(in.begin(), in.end());
  for (TensorType& t : stand_in)
    if (t.has_unknown_rank()) {
      t.rank_unknown = false;
      t.shape = op == OpKind::Reshape ? Shape{Shape::kUnknown} : Shape{};
    }
  TensorType out = infer_type(op, stand_in, attrs, loc);
  if (op != OpKind::Reshape) out = TensorType::unknown_rank(out.dtype);
  return out;
}

}  // namespace

int64_t known_rank(const Tensor& t, OpKind op, SourceLoc loc) {
  if (t.has_unknown_rank()) [[unlikely]]
    unknown_rank_error(op, 0, type_of(t), loc);
  return t.rank();
}

TensorType infer_type(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const int arity = op_info(op).arity;
  if (arity >= 0 && in.size() != static_cast<size_t>(arity))
    throw InternalError(fmt::format("{} expects {} inputs, got {}{}", op_name(op), arity, in.size(), at(loc)));
  for (const TensorType& t : in)
    if (t.has_unknown_rank()) [[unlikely]]
      return infer_type_unknown_rank(op, in, attrs, loc);
  switch (op) {
#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Raises, Cost, Vector, Gradient, Api, ApiName, Equivalent) \
  case OpKind::Name: return type_rule_##TypeRule(op, in, attrs, loc);
#include "ag/graph/ops.def"
  }
  throw InternalError(fmt::format("no type rule for op {}", static_cast<int>(op)));
}


TensorType join_types(const TensorType& a, const TensorType& b) {
  if (a.is_untyped_list()) return b;  // an untyped list fits any element shape
  if (b.is_untyped_list()) return a;
  if (a.has_unknown_rank() || b.has_unknown_rank() || a.shape.rank() != b.shape.rank()) {
    if (a.dtype == DType::List) throw InternalError("join_types: element ranks differ");
    return TensorType::unknown_rank(a.dtype);  // TensorFlow's most specific common supertype
  }
  TensorType out = a;
  for (int64_t i = 0; i < a.shape.rank(); ++i) out.shape[i] = join_dim(a.shape[i], b.shape[i]);
  return out;
}

}  // namespace ag::detail
