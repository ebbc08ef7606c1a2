// Gradient rules of the layout ops: each moves the upstream gradient back to where its input's
// elements were. A slice pads with zeros (zeros_like of slices of the input, so unknown dims need
// no shape arithmetic); a gather scatter-adds, as a one-hot matmul (along another axis than 0:
// with that axis moved first and back).
#include "rules.h"

#include <fmt/format.h>

#include "ag/construct.h"
#include "ag/detail/ops_internal.h"

namespace ag::detail {
namespace {

[[noreturn]] void unimplemented(const GradContext& c, const std::string& why) {
  throw UnimplementedError(fmt::format("the gradient of {} {}{}", user_op_name(c.op), why, at(c.loc)));
}

// `shape` with at most one unknown dim as -1, for reshape (UnimplementedError otherwise).
Shape reshape_target(const GradContext& c, const Shape& shape) {
  int unknown = 0;
  for (int64_t d : shape) unknown += d < 0;
  if (unknown > 1)
    unimplemented(c, fmt::format("back to shape {} (more than one unknown dim) is not supported yet", shape.str()));
  return shape;
}

}  // namespace

std::vector<Tensor> grad_transpose(const GradContext& c) {
  const Shape& perm = c.attrs.perm();
  std::vector<int64_t> inverse(static_cast<size_t>(perm.rank()));
  for (int64_t i = 0; i < perm.rank(); ++i) inverse[static_cast<size_t>(perm[i])] = i;
  return {transpose(c.dys[0], inverse)};
}

std::vector<Tensor> grad_reshape(const GradContext& c) {
  return {reshape(c.dys[0], reshape_target(c, c.inputs[0].shape()))};
}

std::vector<Tensor> grad_expand_dims(const GradContext& c) {
  const int64_t axis = normalize_axis(c.attrs.axis, c.outputs[0].shape().rank(), c.op, c.loc);
  return {squeeze(c.dys[0], {axis})};
}

std::vector<Tensor> grad_squeeze(const GradContext& c) {
  Tensor g = c.dys[0];
  for (int64_t axis : c.attrs.axes()) g = expand_dims(g, axis);  // ascending: each lands where it was
  return {g};
}

std::vector<Tensor> grad_concat(const GradContext& c) {
  const int64_t rank = c.outputs[0].shape().rank();
  const int64_t axis = normalize_axis(c.attrs.axis, rank, c.op, c.loc);
  std::vector<Tensor> grads;
  int64_t offset = 0;
  Tensor run_time_offset;  // from the first operand of unknown size on: the offset at run time
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const int64_t n = c.inputs[i].shape()[axis];
    const bool last = i + 1 == c.inputs.size();
    if ((n < 0 && !last) || run_time_offset.has_value()) {
      // Rows [offset, offset + n) taken by a gather, with n and the offset known at run time.
      if (!run_time_offset.has_value()) run_time_offset = Tensor(offset);
      const Tensor size = gather(shape_of(c.inputs[i]), Tensor(axis));
      grads.push_back(gather(c.dys[0], range(run_time_offset, run_time_offset + size), axis));
      run_time_offset = run_time_offset + size;
      continue;
    }
    std::vector<int64_t> begin(static_cast<size_t>(rank), 0), size(static_cast<size_t>(rank), -1);
    begin[static_cast<size_t>(axis)] = offset;
    size[static_cast<size_t>(axis)] = n;  // -1 for the last: to the end
    grads.push_back(slice(c.dys[0], begin, size));
    offset += n;
  }
  return grads;
}

// dy written over zeros where the slice was taken.
std::vector<Tensor> grad_slice(const GradContext& c) {
  return {slice_update(zeros_like(c.inputs[0]), c.dys[0], c.attrs.slice_begin(), c.loc)};
}

// x's gradient is dy with the updated box zeroed (that box came from the update); the update's
// is dy's box.
std::vector<Tensor> grad_slice_update(const GradContext& c) {
  const Tensor& update = c.inputs[1];
  const Shape& begin = c.attrs.slice_begin();
  // The update's box of dy: one slice, to the end of dy in the dims whose size is known only at
  // run time, which then keep the update's first rows.
  std::vector<int64_t> size(update.shape().begin(), update.shape().end());
  Tensor dupdate = slice(c.dys[0], std::vector<int64_t>(begin.begin(), begin.end()), size);
  for (int64_t d = 0; d < update.shape().rank(); ++d)
    if (size[static_cast<size_t>(d)] < 0) dupdate = gather(dupdate, range(gather(shape_of(update), Tensor(d))), d);
  return {slice_update(c.dys[0], zeros_like(update), begin, c.loc), dupdate};
}

std::vector<Tensor> grad_gather(const GradContext& c) {
  const Tensor& params = c.inputs[0];
  const Tensor& indices = c.inputs[1];
  const int64_t rank = params.shape().rank(), index_rank = indices.shape().rank();
  const int64_t axis = normalize_axis(c.attrs.axis, rank, c.op, c.loc);
  // Along another axis: move it first (in dy: the index dims first), scatter, move it back.
  std::vector<int64_t> perm_p, perm_dy;
  perm_p.push_back(axis);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis) perm_p.push_back(d);
  for (int64_t d = 0; d < index_rank; ++d) perm_dy.push_back(axis + d);
  for (int64_t d = 0; d < axis; ++d) perm_dy.push_back(d);
  for (int64_t d = axis + index_rank; d < c.dys[0].shape().rank(); ++d) perm_dy.push_back(d);
  Shape moved;
  for (int64_t d : perm_p) moved.push_back(params.shape()[d]);
  const Tensor dy = axis == 0 ? c.dys[0] : transpose(c.dys[0], perm_dy);
  // Each row of dy added into the row of params it came from: a segment sum over the indices
  // into zeros of params' size seen as [N, R] (O(K R), where a one-hot matmul was O(K N R)).
  const int64_t k = indices.shape().num_elements();
  const int64_t r = Shape(moved.begin() + 1, moved.end()).num_elements(), n = moved[0];
  if ((k < 0 && r < 0) || (n < 0 && r < 0))
    unimplemented(c, "with the rows' size and the indices' or the axis' size unknown is not supported yet");
  const Tensor rows = reshape(dy, {k < 0 ? -1 : k, k < 0 ? r : (r < 0 ? -1 : r)});
  const Tensor zero_rows = reshape(zeros_like(params), {r < 0 ? n : -1, r < 0 ? -1 : r});
  const Tensor g = reshape(apply_op(OpKind::UnsortedSegmentSum, {zero_rows, reshape(indices, {-1}), rows}, Attrs::none(), c.loc),
                           reshape_target(c, moved));
  if (axis == 0) return {g, Tensor()};
  std::vector<int64_t> back(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) back[static_cast<size_t>(perm_p[static_cast<size_t>(i)])] = i;
  return {transpose(g, back), Tensor()};
}

}  // namespace ag::detail
