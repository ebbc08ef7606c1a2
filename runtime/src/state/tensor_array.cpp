// ag::TensorArray: eager writes mutate the list in place (as in TensorFlow); while tracing, or
// on a symbolic handle, reads and writes are List ops in the graph.
#include "ag/tensor_array.h"

#include <fmt/format.h>

#include "ag/detail/tensor_list.h"
#include "../trace/frame.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/tape.h"

namespace ag {
namespace detail {
void list_write_in_place(TensorList& l, int64_t index, const Tensor& value, SourceLoc loc);
Tensor list_read(const TensorList& l, int64_t index, SourceLoc loc);
Tensor list_stack(const TensorList& l, const Shape& fallback_elem_shape);
namespace {
Tensor index_tensor(const Operand& index, OpKind op) {
  if (index.is_tensor()) {
    const Tensor& t = index.tensor();
    check_readable(t, op, index.loc());
    if (!is_integer(t.dtype()) || t.rank() != 0)
      throw TypeError(fmt::format("{}: the index must be an integer scalar, got {}{}{}", user_op_name(op),
                                  dtype_name(t.dtype()), t.shape().str(), at(index.loc())));
    return t;
  }
  if (index.scalar().kind != WeakScalar::Int)
    throw TypeError(fmt::format("{}: the index must be an integer{}", user_op_name(op), at(index.loc())));
  return Tensor(index.scalar().i);
}
}  // namespace
}  // namespace detail

TensorArray::TensorArray(DType dtype, int64_t size, bool dynamic_size, bool infer_shape) : dtype_(dtype) {
  if (dtype == DType::List) throw TypeError("ag::TensorArray: elements cannot be TensorArrays");
  if (size < 0) throw ValueError("ag::TensorArray: size must be >= 0");
  auto* list = new detail::TensorList;
  list->elem_dtype = dtype;
  list->dynamic_size = dynamic_size;
  list->infer_shape = infer_shape;
  list->resize(size);
  handle_ = detail::make_list_tensor(list);
}

TensorArray TensorArray::from_handle(Tensor handle, DType dtype) {
  TensorArray ta;
  ta.handle_ = std::move(handle);
  ta.dtype_ = dtype;
  return ta;
}

TensorArray TensorArray::write(Operand index, const Tensor& value) {
  const Tensor idx = detail::index_tensor(index, OpKind::ListWrite);
  detail::check_readable(value, OpKind::ListWrite, index.loc());
  detail::check_readable(handle_, OpKind::ListWrite, index.loc());
  const Tensor in[3] = {handle_, idx, value};
  if (handle_.is_symbolic() || idx.is_symbolic() || value.is_symbolic()) {
    handle_ = detail::trace_op(OpKind::ListWrite, in, Attrs::none(), index.loc());
  } else {
    detail::list_write_in_place(detail::list_of(handle_), detail::element_as_int(idx, 0), value, index.loc());
    // In place: under a tape the array gets a new handle, so that the tape tells it apart from
    // the array before the write (the same elements).
    if (detail::tapes_alive()) handle_ = detail::tape_alias(handle_);
  }
  // The list ops bypass apply_op: they tell the tapes themselves.
  if (detail::tapes_alive()) [[unlikely]]
    detail::tape_record(OpKind::ListWrite, in, Attrs::none(), index.loc(), {&handle_, 1});
  return *this;
}

Tensor TensorArray::read(Operand index) const {
  const Tensor idx = detail::index_tensor(index, OpKind::ListRead);
  detail::check_readable(handle_, OpKind::ListRead, index.loc());
  if (handle_.is_symbolic() || idx.is_symbolic()) {
    if (detail::type_of(handle_).rank_unknown)
      throw ValueError(fmt::format("TensorArray::read: the TensorArray has no element shape yet: nothing has been "
                                   "written to it before this read (write an element first){}",
                                   detail::at(index.loc())));
  }
  const Tensor in[2] = {handle_, idx};
  const Tensor out = handle_.is_symbolic() || idx.is_symbolic()
                         ? detail::trace_op(OpKind::ListRead, in, Attrs::none(), index.loc())
                         : detail::list_read(detail::list_of(handle_), detail::element_as_int(idx, 0), index.loc());
  if (detail::tapes_alive()) [[unlikely]]
    detail::tape_record(OpKind::ListRead, in, Attrs::none(), index.loc(), {&out, 1});
  return out;
}

Tensor TensorArray::stack() const {
  detail::check_readable(handle_, OpKind::ListStack, {});
  Attrs attrs;
  attrs.shape = handle_.shape();  // the element shape (a List handle's shape is its element shape)
  const Tensor out = handle_.is_symbolic() ? detail::trace_op(OpKind::ListStack, {&handle_, 1}, attrs, {})
                                           : detail::list_stack(detail::list_of(handle_), Shape{});
  if (detail::tapes_alive()) [[unlikely]]
    detail::tape_record(OpKind::ListStack, {&handle_, 1}, attrs, {}, {&out, 1});
  return out;
}

Tensor TensorArray::size() const {
  detail::check_readable(handle_, OpKind::ListSize, {});
  if (handle_.is_symbolic()) return detail::trace_op(OpKind::ListSize, {&handle_, 1}, Attrs::none(), {});
  return Tensor(static_cast<int32_t>(detail::list_of(handle_).size));
}

}  // namespace ag
