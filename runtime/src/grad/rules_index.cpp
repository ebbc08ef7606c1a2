// Gradient rules of the Index family (argsort has none: its result is integers).
#include "ag/construct.h"
#include "ag/detail/ops_internal.h"
#include "rules.h"

namespace ag::detail {
namespace {

// dy's rows at indices, zero where an index is negative (a dropped segment id).
Tensor rows_at(const Tensor& dy, const Tensor& indices) {
  const Tensor valid = indices >= 0;
  const Tensor g = gather(dy, maximum(indices, 0));
  Tensor mask = valid;
  for (int64_t d = 1; d < dy.rank(); ++d) mask = expand_dims(mask, -1);
  return where(mask, g, zeros_like(g));
}

}  // namespace

std::vector<Tensor> grad_take_along_axis(const GradContext& c) {
  return {apply_op(OpKind::TakeAlongAxisGrad, {c.inputs[0], c.inputs[1], c.dys[0]}, c.attrs, c.loc), Tensor()};
}

// Linear in dy (x gives only its shape): taken back along the same indices.
std::vector<Tensor> grad_take_along_axis_grad(const GradContext& c) {
  return {Tensor(), Tensor(), apply_op(OpKind::TakeAlongAxis, {c.dys[0], c.inputs[1]}, c.attrs, c.loc)};
}

// The rows written lose the base's gradient; the updates get dy's rows.
std::vector<Tensor> grad_tensor_scatter_update(const GradContext& c) {
  const Tensor& idx = c.inputs[1];
  return {apply_op(OpKind::TensorScatterUpdate, {c.dys[0], idx, zeros_like(c.inputs[2])}, c.attrs, c.loc), Tensor(),
          gather(c.dys[0], idx)};
}

std::vector<Tensor> grad_tensor_scatter_add(const GradContext& c) {
  return {c.dys[0], Tensor(), gather(c.dys[0], c.inputs[1])};
}

std::vector<Tensor> grad_unsorted_segment_sum(const GradContext& c) {
  return {c.dys[0], Tensor(), rows_at(c.dys[0], c.inputs[1])};
}

// TensorFlow's: the gradient of a segment's maximum is shared by the elements equal to it.
std::vector<Tensor> grad_unsorted_segment_max(const GradContext& c) {
  const Tensor &ids = c.inputs[1], &data = c.inputs[2];
  const Tensor selected = logical_and(equal(data, rows_at(c.outputs[0], ids)),
                                      [&] {
                                        Tensor valid = ids >= 0;
                                        for (int64_t d = 1; d < data.rank(); ++d) valid = expand_dims(valid, -1);
                                        return valid;
                                      }());
  const Tensor count = apply_op(OpKind::UnsortedSegmentSum,
                                {zeros_like(c.outputs[0]), ids, cast(selected, data.dtype())}, c.attrs, c.loc);
  const Tensor share = rows_at(c.dys[0] / maximum(count, 1), ids);
  return {Tensor(), Tensor(), where(selected, share, zeros_like(share))};
}

}  // namespace ag::detail
