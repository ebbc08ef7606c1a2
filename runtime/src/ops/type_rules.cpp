// Type rules: each op's result dtype and static shape from its inputs' (unknown dims allowed).
#include <fmt/format.h>

#include "ag/detail/ops_internal.h"
#include "ag/detail/variable_state.h"
#include "kernels.h"

namespace ag::detail {
namespace {

[[noreturn]] void type_error(OpKind op, SourceLoc loc, const std::string& msg) {
  throw TypeError(fmt::format("{}: {}{}", user_op_name(op), msg, at(loc)));
}
[[noreturn]] void value_error(OpKind op, SourceLoc loc, const std::string& msg) {
  throw ValueError(fmt::format("{}: {}{}", user_op_name(op), msg, at(loc)));
}

std::string describe(const TensorType& t) { return fmt::format("{}{}", dtype_name(t.dtype), t.shape.str()); }

void require_arity(OpKind op, std::span<const TensorType> in, size_t n, SourceLoc loc) {
  if (in.size() != n) throw InternalError(fmt::format("{} expects {} inputs, got {}{}", op_name(op), n, in.size(), at(loc)));
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

TensorType infer_type(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  switch (op_class(op)) {
    case OpClass::Source:
      switch (op) {
        case OpKind::Const: return type_of(attrs.value);
        case OpKind::Range: {
          require_arity(op, in, 3, loc);
          for (const auto& t : in) {
            require_numeric(op, t, "each of start, limit and delta", loc);
            if (t.shape.rank() != 0) value_error(op, loc, "start, limit and delta must be scalars, got " + describe(t));
          }
          if (in[0].dtype != in[1].dtype || in[0].dtype != in[2].dtype)
            type_error(op, loc, fmt::format("start, limit and delta have different dtypes ({}, {}, {})",
                                            dtype_name(in[0].dtype), dtype_name(in[1].dtype), dtype_name(in[2].dtype)));
          return {in[0].dtype, Shape{Shape::kUnknown}};
        }
        case OpKind::Fill:
          require_arity(op, in, 1, loc);
          if (in[0].shape.rank() != 0) value_error(op, loc, "the fill value must be a scalar, got " + describe(in[0]));
          return {in[0].dtype, attrs.shape};
        case OpKind::FillLike: require_arity(op, in, 1, loc); return {attrs.dtype, in[0].shape};
        default: throw InternalError(fmt::format("no type rule for {}", op_name(op)));
      }

    case OpClass::Unary:
      require_arity(op, in, 1, loc);
      if (op != OpKind::Identity) require_numeric(op, in[0], "the operand", loc);
      return in[0];

    case OpClass::UnaryFloat:
      require_arity(op, in, 1, loc);
      if (!is_floating(in[0].dtype))
        type_error(op, loc, fmt::format("needs a floating-point tensor, got {}; use ag::cast(x, ag::float32)",
                                        describe(in[0])));
      return in[0];

    case OpClass::UnaryBool:
      require_arity(op, in, 1, loc);
      if (in[0].dtype != DType::Bool) type_error(op, loc, "needs a bool tensor, got " + describe(in[0]));
      return in[0];

    case OpClass::Cast:
      require_arity(op, in, 1, loc);
      if (in[0].dtype == DType::List) type_error(op, loc, "cannot cast a TensorArray");
      return {attrs.dtype, in[0].shape};

    case OpClass::Binary:
      require_arity(op, in, 2, loc);
      require_same_dtype(op, in[0], in[1], loc);
      require_numeric(op, in[0], "each operand", loc);
      return {in[0].dtype, broadcast_shapes(in[0].shape, in[1].shape, op, loc)};

    case OpClass::Compare:
      require_arity(op, in, 2, loc);
      require_same_dtype(op, in[0], in[1], loc);
      if (in[0].dtype == DType::List || (in[0].dtype == DType::Bool && op != OpKind::Equal && op != OpKind::NotEqual))
        type_error(op, loc, "cannot order tensors of dtype " + std::string(dtype_name(in[0].dtype)));
      return {DType::Bool, broadcast_shapes(in[0].shape, in[1].shape, op, loc)};

    case OpClass::Logical:
      require_arity(op, in, 2, loc);
      if (in[0].dtype != DType::Bool || in[1].dtype != DType::Bool)
        type_error(op, loc, fmt::format("needs bool operands, got {} and {}", describe(in[0]), describe(in[1])));
      return {DType::Bool, broadcast_shapes(in[0].shape, in[1].shape, op, loc)};

    case OpClass::Select: {
      require_arity(op, in, 3, loc);
      if (in[0].dtype != DType::Bool) type_error(op, loc, "the condition must be a bool tensor, got " + describe(in[0]));
      if (in[1].dtype != in[2].dtype)
        type_error(op, loc, fmt::format("x and y have different dtypes: {} and {}; use ag::cast", describe(in[1]),
                                        describe(in[2])));
      Shape s = broadcast_shapes(in[1].shape, in[2].shape, op, loc);
      return {in[1].dtype, broadcast_shapes(in[0].shape, s, op, loc)};
    }

    case OpClass::Reduce: {
      require_arity(op, in, 1, loc);
      const bool boolean = op == OpKind::ReduceAny || op == OpKind::ReduceAll;
      if (boolean && in[0].dtype != DType::Bool) type_error(op, loc, "needs a bool tensor, got " + describe(in[0]));
      if (!boolean) require_numeric(op, in[0], "the operand", loc);
      Shape out;
      for (int64_t i = 0; i < in[0].shape.rank(); ++i) {
        const bool reduced = std::find(attrs.ints.begin(), attrs.ints.end(), i) != attrs.ints.end();
        if (!reduced) out.push_back(in[0].shape[i]);
        else if (attrs.keepdims) out.push_back(1);
      }
      return {in[0].dtype, out};
    }

    case OpClass::ArgReduce: {
      require_arity(op, in, 1, loc);
      require_numeric(op, in[0], "the operand", loc);
      if (in[0].shape.rank() == 0) value_error(op, loc, "needs a tensor of rank >= 1, got a scalar");
      Shape out = in[0].shape;
      out.erase(static_cast<size_t>(normalize_axis(attrs.axis, in[0].shape.rank(), op, loc)));
      return {DType::Int64, out};
    }

    case OpClass::MatMul: {
      require_arity(op, in, 2, loc);
      require_same_dtype(op, in[0], in[1], loc);
      require_numeric(op, in[0], "each operand", loc);
      const Shape &a = in[0].shape, &b = in[1].shape;
      if (a.rank() < 2 || b.rank() < 2)
        value_error(op, loc, fmt::format("needs operands of rank >= 2, got {} and {}", a.str(), b.str()));
      const int64_t k1 = a[a.rank() - 1], k2 = b[b.rank() - 2];
      if (k1 >= 0 && k2 >= 0 && k1 != k2)
        value_error(op, loc, fmt::format("inner dimensions differ: {} x {} (a has {} columns, b has {} rows)", a.str(),
                                         b.str(), k1, k2));
      Shape batch = broadcast_shapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2), op, loc);
      batch.push_back(a[a.rank() - 2]);
      batch.push_back(b[b.rank() - 1]);
      return {in[0].dtype, batch};
    }

    case OpClass::Layout: break;
    case OpClass::Stateful: break;
    case OpClass::List: break;
    case OpClass::Control: throw InternalError("If/While types come from their sub-graphs");
  }

  switch (op) {
    case OpKind::Transpose: {
      require_arity(op, in, 1, loc);
      const Shape& s = in[0].shape;
      if (attrs.ints.rank() != s.rank())
        value_error(op, loc, fmt::format("perm {} does not match a tensor of rank {}", attrs.ints.str(), s.rank()));
      Shape out;
      std::vector<bool> seen(s.rank(), false);
      for (int64_t p : attrs.ints) {
        if (p < 0 || p >= s.rank() || seen[p]) value_error(op, loc, "perm " + attrs.ints.str() + " is not a permutation");
        seen[p] = true;
        out.push_back(s[p]);
      }
      return {in[0].dtype, out};
    }
    case OpKind::Reshape: {
      require_arity(op, in, 1, loc);
      Shape out = attrs.shape;
      int unknown = -1;
      int64_t known = 1;
      for (int64_t i = 0; i < out.rank(); ++i) {
        if (out[i] == -1) {
          if (unknown >= 0) value_error(op, loc, "at most one dim of the new shape may be -1, got " + out.str());
          unknown = static_cast<int>(i);
        } else if (out[i] < 0) {
          value_error(op, loc, "invalid dim in new shape " + out.str());
        } else {
          known *= out[i];
        }
      }
      const int64_t n = in[0].shape.num_elements();
      if (n >= 0) {
        if (unknown >= 0) {
          if (known == 0 || n % known != 0)
            value_error(op, loc, fmt::format("cannot reshape {} ({} elements) to {}", in[0].shape.str(), n, out.str()));
          out[unknown] = n / known;
        } else if (known != n) {
          value_error(op, loc, fmt::format("cannot reshape {} ({} elements) to {} ({} elements)", in[0].shape.str(), n,
                                           out.str(), known));
        }
      }
      return {in[0].dtype, out};
    }
    case OpKind::Concat: {
      if (in.empty()) value_error(op, loc, "needs at least one tensor");
      const int64_t rank = in[0].shape.rank();
      if (rank == 0) value_error(op, loc, "cannot concatenate scalars; use ag::stack");
      const int64_t axis = normalize_axis(attrs.axis, rank, op, loc);
      Shape out = in[0].shape;
      for (size_t k = 1; k < in.size(); ++k) {
        if (in[k].dtype != in[0].dtype)
          type_error(op, loc, fmt::format("tensor {} is {} but tensor 0 is {}; use ag::cast", k, describe(in[k]),
                                          describe(in[0])));
        if (in[k].shape.rank() != rank)
          value_error(op, loc, fmt::format("tensor {} has rank {} but tensor 0 has rank {}", k, in[k].shape.rank(), rank));
        for (int64_t i = 0; i < rank; ++i) {
          const int64_t d = in[k].shape[i];
          if (i == axis) out[i] = (out[i] < 0 || d < 0) ? Shape::kUnknown : out[i] + d;
          else if (out[i] >= 0 && d >= 0 && out[i] != d)
            value_error(op, loc, fmt::format("tensor {} has shape {} but tensor 0 has {} (dims other than axis {} "
                                             "must match)",
                                             k, in[k].shape.str(), in[0].shape.str(), axis));
          else if (out[i] < 0) out[i] = d;
        }
      }
      return {in[0].dtype, out};
    }
    case OpKind::Slice: {
      require_arity(op, in, 1, loc);
      const Shape& s = in[0].shape;
      if (attrs.ints.rank() != s.rank() || attrs.shape.rank() != s.rank())
        value_error(op, loc, fmt::format("begin {} and size {} must have one entry per dim of {}", attrs.ints.str(),
                                         attrs.shape.str(), s.str()));
      Shape out;
      for (int64_t i = 0; i < s.rank(); ++i) {
        const int64_t b = attrs.ints[i], sz = attrs.shape[i], d = s[i];
        if (b < 0 || sz < -1) value_error(op, loc, fmt::format("invalid begin {} / size {} in dim {}", b, sz, i));
        if (d >= 0 && (b > d || (sz >= 0 && b + sz > d)))
          value_error(op, loc, fmt::format("slice [{}, {}) of dim {} is out of range for shape {}", b,
                                           sz < 0 ? d : b + sz, i, s.str()));
        out.push_back(sz >= 0 ? sz : (d >= 0 ? d - b : Shape::kUnknown));
      }
      return {in[0].dtype, out};
    }
    case OpKind::Gather: {
      require_arity(op, in, 2, loc);
      if (!is_integer(in[1].dtype)) type_error(op, loc, "indices must be int32 or int64, got " + describe(in[1]));
      const Shape& p = in[0].shape;
      if (in[0].dtype == DType::List) value_error(op, loc, "cannot index a TensorArray; use read()");
      if (p.rank() == 0) value_error(op, loc, "cannot index a scalar");
      const int64_t axis = normalize_axis(attrs.axis, p.rank(), op, loc);
      Shape out(p.begin(), p.begin() + axis);
      for (int64_t d : in[1].shape) out.push_back(d);
      for (int64_t i = axis + 1; i < p.rank(); ++i) out.push_back(p[i]);
      return {in[0].dtype, out};
    }
    case OpKind::ExpandDims: {
      require_arity(op, in, 1, loc);
      Shape out = in[0].shape;
      const int64_t axis = normalize_axis(attrs.axis, out.rank() + 1, op, loc);
      out.insert(static_cast<size_t>(axis), 1);
      return {in[0].dtype, out};
    }
    case OpKind::Squeeze: {
      require_arity(op, in, 1, loc);
      const Shape& s = in[0].shape;
      Shape out;
      for (int64_t i = 0; i < s.rank(); ++i) {
        // attrs.ints is the exact list (ag::squeeze resolves "all dims of size 1").
        if (std::find(attrs.ints.begin(), attrs.ints.end(), i) != attrs.ints.end()) {
          // A listed dim must be 1 (or unknown while tracing). A 0 dim is no 1: removing it
          // would turn an empty tensor into one with elements.
          if (s[i] != 1 && s[i] != Shape::kUnknown)
            value_error(op, loc, fmt::format("cannot squeeze dim {} of size {} (shape {})", i, s[i], s.str()));
          continue;
        }
        out.push_back(s[i]);
      }
      return {in[0].dtype, out};
    }
    case OpKind::ShapeOf: require_arity(op, in, 1, loc); return {DType::Int64, Shape{in[0].shape.rank()}};

    case OpKind::Print: return {DType::Bool, Shape{}};  // no outputs; the type is unused
    case OpKind::Assert:
      if (in.empty() || in[0].dtype != DType::Bool)
        type_error(op, loc, fmt::format("the condition must be a bool tensor, got {}", in.empty() ? "nothing" : describe(in[0])));
      return {DType::Bool, Shape{}};  // no outputs
    case OpKind::ReadVariable: return {attrs.variable->dtype, attrs.variable->shape};
    case OpKind::RandomUniform:
    case OpKind::RandomNormal: return random_type(op, in.size(), attrs, loc);
    case OpKind::AssignVariable:
    case OpKind::AssignAddVariable:
    case OpKind::AssignSubVariable: {
      require_arity(op, in, 1, loc);
      const auto& v = *attrs.variable;
      if (in[0].dtype != v.dtype)
        type_error(op, loc, fmt::format("{} is {}, the new value is {}", v.describe(), dtype_name(v.dtype),
                                        describe(in[0])));
      if (op != OpKind::AssignVariable && !is_numeric(v.dtype))
        type_error(op, loc, v.describe() + " is not numeric");
      const bool fits = in[0].shape.rank() == 0 ||
                        (op == OpKind::AssignVariable ? v.shape.is_compatible_with(in[0].shape)
                                                      : broadcast_shapes(v.shape, in[0].shape, op, loc).is_compatible_with(v.shape));
      if (!fits)
        value_error(op, loc, fmt::format("{} has shape {}, the new value has shape {}; a Variable's shape never changes",
                                         v.describe(), v.shape.str(), in[0].shape.str()));
      return {v.dtype, v.shape};
    }

    case OpKind::ListWrite: {
      require_arity(op, in, 3, loc);
      if (!is_integer(in[1].dtype) || in[1].shape.rank() != 0)
        type_error(op, loc, "the index must be an integer scalar, got " + describe(in[1]));
      if (in[2].dtype != in[0].elem_dtype)
        type_error(op, loc, fmt::format("the TensorArray holds {} but the value is {}", dtype_name(in[0].elem_dtype),
                                        describe(in[2])));
      TensorType out = in[0];
      // Element shapes must agree; the first write types an untyped list.
      if (out.elem_rank_unknown) {
        out.shape = in[2].shape;
        out.elem_rank_unknown = false;
      } else if (out.shape.rank() == in[2].shape.rank()) {
        for (int64_t i = 0; i < out.shape.rank(); ++i) {
          if (out.shape[i] >= 0 && in[2].shape[i] >= 0 && out.shape[i] != in[2].shape[i])
            value_error(op, loc, fmt::format("the TensorArray holds elements of shape {} but the value has shape {}",
                                             out.shape.str(), in[2].shape.str()));
          if (out.shape[i] < 0) out.shape[i] = in[2].shape[i];
        }
      } else {
        value_error(op, loc, fmt::format("the TensorArray holds elements of shape {} but the value has shape {}",
                                         out.shape.str(), in[2].shape.str()));
      }
      return out;
    }
    case OpKind::ListRead:
      require_arity(op, in, 2, loc);
      if (!is_integer(in[1].dtype) || in[1].shape.rank() != 0)
        type_error(op, loc, "the index must be an integer scalar, got " + describe(in[1]));
      // (An untyped list: TensorArray::read refuses it while tracing; at run time the kernel
      // reports the element as never written.)
      return {in[0].elem_dtype, in[0].shape};
    case OpKind::ListStack: {
      require_arity(op, in, 1, loc);
      Shape out = in[0].elem_rank_unknown ? attrs.shape : in[0].shape;
      out.insert(0, Shape::kUnknown);
      return {in[0].elem_dtype, out};
    }
    case OpKind::ListSize: require_arity(op, in, 1, loc); return {DType::Int32, Shape{}};
    default: break;
  }
  throw InternalError(fmt::format("no type rule for {}", op_name(op)));
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
