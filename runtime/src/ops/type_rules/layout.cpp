// Type rules of the layout ops: transpose, reshape, concat, slice, gather, expand_dims, squeeze, shape_of.
#include "type_rules.h"

#include <algorithm>

namespace ag::detail {

TensorType type_rule_transpose(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const Shape& s = in[0].shape;
  if (attrs.perm().rank() != s.rank())
    value_error(op, loc, fmt::format("perm {} does not match a tensor of rank {}", attrs.perm().str(), s.rank()));
  Shape out;
  std::vector<bool> seen(s.rank(), false);
  for (int64_t p : attrs.perm()) {
    if (p < 0 || p >= s.rank() || seen[p]) value_error(op, loc, "perm " + attrs.perm().str() + " is not a permutation");
    seen[p] = true;
    out.push_back(s[p]);
  }
  return {in[0].dtype, out};
}

TensorType type_rule_reshape(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
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

TensorType type_rule_concat(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
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

TensorType type_rule_slice(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const Shape& s = in[0].shape;
  if (attrs.slice_begin().rank() != s.rank() || attrs.slice_size().rank() != s.rank())
    value_error(op, loc, fmt::format("begin {} and size {} must have one entry per dim of {}", attrs.slice_begin().str(),
                                     attrs.slice_size().str(), s.str()));
  Shape out;
  for (int64_t i = 0; i < s.rank(); ++i) {
    const int64_t b = attrs.slice_begin()[i], sz = attrs.slice_size()[i], d = s[i];
    if (b < 0) value_error(op, loc, fmt::format("invalid begin {} / size {} in dim {}", b, sz, i));
    if (d >= 0 && (b > d || (sz >= 0 && b + sz > d)))
      value_error(op, loc, fmt::format("slice [{}, {}) of dim {} is out of range for shape {}", b,
                                       sz < 0 ? d + sz + 1 : b + sz, i, s.str()));
    out.push_back(sz >= 0 ? sz : (d >= 0 ? std::max<int64_t>(d + sz + 1 - b, 0) : Shape::kUnknown));
  }
  return {in[0].dtype, out};
}

// x with `update` written over the box of update's shape at `begin` (x.at(...).set).
TensorType type_rule_slice_update(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const Shape& s = in[0].shape;
  const Shape& u = in[1].shape;
  if (in[0].dtype == DType::List) value_error(op, loc, "cannot update a TensorArray; use write()");
  if (in[1].dtype != in[0].dtype)
    type_error(op, loc, fmt::format("the update is {} but the tensor is {}; use ag::cast", describe(in[1]), describe(in[0])));
  if (u.rank() != s.rank() || attrs.slice_begin().rank() != s.rank())
    value_error(op, loc, fmt::format("the update {} and begin {} must have one entry per dim of {}", u.str(),
                                     attrs.slice_begin().str(), s.str()));
  for (int64_t i = 0; i < s.rank(); ++i) {
    const int64_t b = attrs.slice_begin()[i];
    if (b < 0) value_error(op, loc, fmt::format("invalid begin {} in dim {}", b, i));
    if (s[i] >= 0 && u[i] >= 0 && b + u[i] > s[i])
      value_error(op, loc, fmt::format("the box [{}, {}) of dim {} is out of range for shape {}", b, b + u[i], i, s.str()));
  }
  return in[0];
}

TensorType type_rule_gather(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  if (!is_index_dtype(in[1].dtype)) type_error(op, loc, "indices must be int32 or int64, got " + describe(in[1]));
  const Shape& p = in[0].shape;
  if (in[0].dtype == DType::List) value_error(op, loc, "cannot index a TensorArray; use read()");
  if (p.rank() == 0) value_error(op, loc, "cannot index a scalar");
  const int64_t axis = normalize_axis(attrs.axis, p.rank(), op, loc);
  Shape out(p.begin(), p.begin() + axis);
  for (int64_t d : in[1].shape) out.push_back(d);
  for (int64_t i = axis + 1; i < p.rank(); ++i) out.push_back(p[i]);
  return {in[0].dtype, out};
}

TensorType type_rule_expand_dims(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  Shape out = in[0].shape;
  const int64_t axis = normalize_axis(attrs.axis, out.rank() + 1, op, loc);
  out.insert(static_cast<size_t>(axis), 1);
  return {in[0].dtype, out};
}

TensorType type_rule_squeeze(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const Shape& s = in[0].shape;
  Shape out;
  for (int64_t i = 0; i < s.rank(); ++i) {
    // attrs.axes() is the exact list (ag::squeeze resolves "all dims of size 1").
    if (std::find(attrs.axes().begin(), attrs.axes().end(), i) != attrs.axes().end()) {
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

// tf.ensure_shape: the input with its static shape refined; a shape that cannot fit is an error
// now, one that may not fit is checked at run time.
TensorType type_rule_ensure_shape(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc) {
  const Shape& s = in[0].shape;
  Shape out = attrs.shape;
  bool fits = s.rank() == out.rank();
  for (int64_t i = 0; fits && i < s.rank(); ++i) {
    if (out[i] >= 0 && s[i] >= 0 && out[i] != s[i]) fits = false;
    if (out[i] < 0) out[i] = s[i];
  }
  if (!fits) value_error(op, loc, fmt::format("the tensor has shape {}, which cannot have shape {}", s.str(), attrs.shape.str()));
  return {in[0].dtype, out};
}

TensorType type_rule_shape_of(OpKind, std::span<const TensorType> in, const Attrs&, SourceLoc) {
  return {DType::Int64, Shape{in[0].shape.rank()}};
}

}  // namespace ag::detail
