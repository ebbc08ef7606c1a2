// Gradient rules of the TensorArray ops. The gradient of a TensorArray (a List value) is a dense
// tensor of its stacked shape, [size, element shape...]: a read adds the upstream gradient to
// its row, a stack gives it whole, and a write hands its row to the written value and passes the
// rest on to the array before the write. Sizes come from the handles (TensorArray::size): in a
// graph each handle is its own value; eagerly the writes happen in place, so every handle of
// one array has its final size, and rows past a handle's own size are zeros.
#include "rules.h"

#include "ag/construct.h"
#include "ag/detail/ops_internal.h"
#include "ag/tensor_array.h"

namespace ag::detail {
namespace {

TensorArray array_of(const Tensor& handle) { return TensorArray::from_handle(handle, type_of(handle).elem_dtype); }

Tensor rows_of(const Tensor& handle) { return cast(array_of(handle).size(), DType::Int64); }

// 1 at row `index` of `n` rows, 0 elsewhere, shaped [n, 1, ...] to broadcast over elements of
// rank `elem_rank`, in `dtype`.
Tensor row_mask(const Tensor& index, const Tensor& n, int64_t elem_rank, DType dtype) {
  Tensor m = cast(equal(range(n), cast(index, DType::Int64)), dtype);
  for (int64_t d = 0; d < elem_rank; ++d) m = expand_dims(m, -1);
  return m;
}

// The first `n` rows of the dense gradient `g` (a handle before a write may hold fewer rows).
Tensor first_rows(const Tensor& g, const Tensor& n) { return gather(g, range(n)); }

}  // namespace

std::vector<Tensor> grad_list_read(const GradContext& c) {
  const Tensor& handle = c.inputs[0];
  const Tensor& dy = c.dys[0];
  const Tensor n = rows_of(handle);
  return {row_mask(c.inputs[1], n, dy.shape().rank(), dy.dtype()) * expand_dims(dy, 0), Tensor()};
}

std::vector<Tensor> grad_list_stack(const GradContext& c) {
  const Tensor& handle = c.inputs[0];
  // dy has the rows the stack had; the handle's dense gradient may have more (zeros).
  return {first_rows(concat({c.dys[0], zeros_like(array_of(handle).stack())}, 0), rows_of(handle))};
}

std::vector<Tensor> grad_list_write(const GradContext& c) {
  const Tensor& before = c.inputs[0];
  const Tensor& g = c.dys[0];  // the dense gradient of the array after the write
  const Tensor& index = c.inputs[1];
  const Tensor value_grad = gather(g, cast(index, DType::Int64));
  const Tensor mask = row_mask(index, gather(shape_of(g), Tensor(int64_t{0})), g.shape().rank() - 1, g.dtype());
  return {first_rows(g * (1 - mask), rows_of(before)), Tensor(), value_grad};
}

}  // namespace ag::detail
