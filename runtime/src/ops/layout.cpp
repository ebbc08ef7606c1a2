// Layout kernels: transpose, reshape, concat, slice, slice_update, gather, expand_dims, squeeze,
// shape_of.
// Reshape, expand_dims and squeeze are views of the same buffer (tensors are immutable).
#include <cstring>
#include <fmt/format.h>

#include "kernels.h"

namespace ag::detail {
namespace {

const char* bytes(const Tensor& t) { return static_cast<const char*>(detail::impl_of(t)->data); }
char* bytes(Tensor& t) { return static_cast<char*>(detail::impl_of(t)->data); }

Tensor view_as(const Tensor& x, const Shape& shape) {
  auto* impl = detail::impl_of(x);
  const size_t offset = static_cast<size_t>(static_cast<char*>(impl->data) - static_cast<char*>(impl->storage->data));
  return make_view(impl->storage, offset, x.dtype(), shape);
}

// Calls f(whole_offset, box_offset, row) for each row of the box [begin, begin + box) of a
// row-major tensor of shape `whole` (offsets and row length in elements; a scalar is one row).
template <class F>
void for_each_box_row(const Shape& whole, const Shape& begin, const Shape& box, F f) {
  const int64_t rank = whole.rank();
  if (box.num_elements() == 0) return;
  if (rank == 0) return f(int64_t{0}, int64_t{0}, int64_t{1});
  int64_t stride[Shape::kMaxRank];
  stride[rank - 1] = 1;
  for (int64_t d = rank - 2; d >= 0; --d) stride[d] = stride[d + 1] * whole[d + 1];
  const int64_t row = box[rank - 1];
  const int64_t rows = box.num_elements() / row;
  int64_t idx[Shape::kMaxRank] = {};
  for (int64_t r = 0; r < rows; ++r) {
    int64_t at = 0;
    for (int64_t d = 0; d < rank; ++d) at += (begin[d] + idx[d]) * stride[d];
    f(at, r * row, row);
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < box[d]) break;
      idx[d] = 0;
    }
  }
}

// Copies the box [begin, begin + out.shape) of x into out.
void copy_box(const Tensor& x, const Shape& begin, Tensor& out) {
  const size_t es = dtype_size(x.dtype());
  for_each_box_row(x.shape(), begin, out.shape(), [&](int64_t at, int64_t r, int64_t row) {
    std::memcpy(bytes(out) + r * es, bytes(x) + at * es, static_cast<size_t>(row) * es);
  });
}

// Writes `box` over the box [begin, begin + box.shape) of out.
void paste_box(const Tensor& box, const Shape& begin, Tensor& out) {
  const size_t es = dtype_size(out.dtype());
  for_each_box_row(out.shape(), begin, box.shape(), [&](int64_t at, int64_t r, int64_t row) {
    std::memcpy(bytes(out) + at * es, bytes(box) + r * es, static_cast<size_t>(row) * es);
  });
}

Tensor gather(const Tensor& params, const Tensor& indices, int64_t axis, const TensorType& type, SourceLoc loc) {
  const Shape& p = params.shape();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= p[i];
  for (int64_t i = axis + 1; i < p.rank(); ++i) inner *= p[i];
  const int64_t dim = p[axis];
  const int64_t nidx = indices.num_elements();
  std::vector<int64_t> idx(static_cast<size_t>(nidx));
  for (int64_t j = 0; j < nidx; ++j) {
    idx[j] = element_as_int(indices, j);
    if (idx[j] < 0 || idx[j] >= dim)
      throw InvalidArgumentError(fmt::format("ag::gather: index {} is out of range [0, {}) for axis {} of shape {}{}",
                                             idx[j], dim, axis, p.str(), at(loc)));
  }
  // A single row of a contiguous leading axis is a view: x[i] on a loop's tensor costs nothing.
  if (axis == 0 && nidx == 1 && indices.rank() == 0) {
    auto* impl = detail::impl_of(params);
    const size_t base = static_cast<size_t>(static_cast<char*>(impl->data) - static_cast<char*>(impl->storage->data));
    return make_view(impl->storage, base + static_cast<size_t>(idx[0] * inner) * dtype_size(params.dtype()),
                     params.dtype(), type.shape);
  }
  Tensor out = make_tensor(type.dtype, type.shape);
  const size_t block = static_cast<size_t>(inner) * dtype_size(params.dtype());
  char* dst = bytes(out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < nidx; ++j, dst += block)
      std::memcpy(dst, bytes(params) + (o * dim + idx[j]) * block, block);
  return out;
}

}  // namespace

Tensor transpose_copy(const Tensor& x, const Shape& perm) {
  const Shape& s = x.shape();
  Shape os;
  for (int64_t p : perm) os.push_back(s[p]);
  Tensor out = make_tensor(x.dtype(), os);
  const int64_t n = out.num_elements();
  if (n == 0) return out;
  const int64_t rank = s.rank();
  const size_t es = dtype_size(x.dtype());
  int64_t in_stride[Shape::kMaxRank];
  if (rank) in_stride[rank - 1] = 1;
  for (int64_t d = rank - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * s[d + 1];
  int64_t step[Shape::kMaxRank];  // input stride of each output dim
  for (int64_t d = 0; d < rank; ++d) step[d] = in_stride[perm[d]];
  int64_t idx[Shape::kMaxRank] = {};
  int64_t src = 0;
  const char* in = bytes(x);
  char* dst = bytes(out);
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * es, in + src * es, es);
    for (int64_t d = rank - 1; d >= 0; --d) {
      src += step[d];
      if (++idx[d] < os[d]) break;
      src -= step[d] * os[d];
      idx[d] = 0;
    }
  }
  return out;
}

Tensor layout_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& type, SourceLoc loc) {
  switch (op) {
    case OpKind::Transpose: return transpose_copy(in[0], attrs.perm());
    case OpKind::Reshape:
    case OpKind::ExpandDims:
    case OpKind::Squeeze: return view_as(in[0], type.shape);
    case OpKind::EnsureShape:
      if (!attrs.shape.is_compatible_with(in[0].shape()))
        throw InvalidArgumentError(fmt::format("{}: the tensor has shape {}, expected {}{}", user_op_name(op),
                                               in[0].shape().str(), attrs.shape.str(), at(loc)));
      return in[0];
    case OpKind::Concat: {
      Tensor out = make_tensor(type.dtype, type.shape);
      const int64_t axis = normalize_axis(attrs.axis, type.shape.rank(), op, loc);
      int64_t outer = 1;
      for (int64_t i = 0; i < axis; ++i) outer *= type.shape[i];
      const size_t es = dtype_size(type.dtype);
      std::vector<size_t> chunk(in.size());
      for (size_t k = 0; k < in.size(); ++k) chunk[k] = static_cast<size_t>(outer ? in[k].num_elements() / outer : 0) * es;
      char* dst = bytes(out);
      for (int64_t o = 0; o < outer; ++o)
        for (size_t k = 0; k < in.size(); ++k) {
          std::memcpy(dst, bytes(in[k]) + o * chunk[k], chunk[k]);
          dst += chunk[k];
        }
      return out;
    }
    case OpKind::Slice: {
      Tensor out = make_tensor(type.dtype, type.shape);
      copy_box(in[0], attrs.slice_begin(), out);
      return out;
    }
    case OpKind::SliceUpdate: {
      Tensor out = make_tensor(type.dtype, type.shape);
      std::memcpy(bytes(out), bytes(in[0]), static_cast<size_t>(out.num_elements()) * dtype_size(type.dtype));
      paste_box(in[1], attrs.slice_begin(), out);
      return out;
    }
    case OpKind::Gather: {
      const int64_t axis = normalize_axis(attrs.axis, in[0].rank(), op, loc);
      return gather(in[0], in[1], axis, type, loc);
    }
    case OpKind::ShapeOf: {
      Tensor out = make_tensor(DType::Int64, type.shape);
      const Shape& s = in[0].shape();
      std::copy(s.begin(), s.end(), static_cast<int64_t*>(detail::impl_of(out)->data));
      return out;
    }
    default: throw InternalError("layout_kernel: " + std::string(op_name(op)));
  }
}

}  // namespace ag::detail
