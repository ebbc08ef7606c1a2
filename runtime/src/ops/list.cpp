// TensorArray kernels: functional updates of a TensorList (in place when nobody else holds it),
// and the list operations they share with the JIT's typed helpers.
#include <algorithm>
#include <cstring>
#include <fmt/format.h>

#include "ag/detail/tensor_list.h"
#include "kernels.h"

namespace ag::detail {
namespace {

int64_t index_of(const Tensor& t) { return element_as_int(t, 0); }

bool is_unique(const Tensor& handle) {
  const TensorImpl* impl = detail::impl_of(handle);
  return impl->refs.load(std::memory_order_acquire) == 1 &&
         impl->storage->refs.load(std::memory_order_acquire) == 1 &&
         list_of(handle).refs.load(std::memory_order_acquire) == 1;
}

}  // namespace

void TensorList::resize(int64_t n) {
  size = n;
  if (!infer_shape) items.resize(static_cast<size_t>(n));
  else if (elem_shape_known) data.resize(static_cast<size_t>(n * elem_bytes()));  // zeros
}

Tensor unshared_list(const Tensor& handle) {
  if (is_unique(handle)) return handle;
  return make_list_tensor(writable_list(handle));
}

void list_write(TensorList& l, int64_t index, const void* value, const Shape& shape, SourceLoc loc) {
  if (index < 0 || (!l.dynamic_size && index >= l.size))
    throw InvalidArgumentError(fmt::format("TensorArray::write: index {} is out of range for a TensorArray of size {}{}",
                                           index, l.size, at(loc)));
  if (!l.infer_shape) {  // elements of any shape, each its own tensor
    if (index >= l.size) l.resize(index + 1);
    Tensor item = make_tensor(l.elem_dtype, shape);
    if (const size_t bytes = static_cast<size_t>(item.num_elements()) * dtype_size(l.elem_dtype))
      std::memcpy(detail::impl_of(item)->data, value, bytes);
    l.items[static_cast<size_t>(index)] = std::move(item);
    return;
  }
  if (l.elem_shape_known && !(l.elem_shape == shape))  // a shape error, as in the traced type rule
    throw ValueError(fmt::format("TensorArray::write: elements have shape {} but the value has shape {}{}",
                                 l.elem_shape.str(), shape.str(), at(loc)));
  if (!l.elem_shape_known) {
    l.elem_shape = shape;
    l.elem_shape_known = true;
    l.data.assign(static_cast<size_t>(l.size * l.elem_bytes()), std::byte{0});
  }
  if (index >= l.size) l.resize(index + 1);
  const int64_t bytes = l.elem_bytes();
  if (bytes) std::memcpy(l.data.data() + index * bytes, value, static_cast<size_t>(bytes));
}

const std::byte* list_element(const TensorList& l, int64_t index, SourceLoc loc) {
  if (index < 0 || index >= l.size)
    throw InvalidArgumentError(fmt::format("TensorArray::read: index {} is out of range for a TensorArray of size {}{}",
                                           index, l.size, at(loc)));
  const bool written = l.infer_shape ? l.elem_shape_known : l.items[static_cast<size_t>(index)].has_value();
  if (!written) throw InvalidArgumentError(fmt::format("TensorArray::read: element {} was never written{}", index, at(loc)));
  return l.infer_shape ? l.elem(index) : static_cast<const std::byte*>(detail::impl_of(l.items[static_cast<size_t>(index)])->data);
}

const Shape& list_element_shape(const TensorList& l, int64_t index) {
  return l.infer_shape ? l.elem_shape : l.items[static_cast<size_t>(index)].shape();
}

bool list_element_type(const TensorList& l, Shape& shape) {
  if (l.infer_shape) {
    shape = l.elem_shape;
    return l.elem_shape_known;
  }
  bool first = true;
  for (const Tensor& item : l.items) {
    if (!item.has_value()) continue;
    if (first) shape = item.shape();
    else if (shape.rank() != item.shape().rank()) return false;
    else
      for (int64_t d = 0; d < shape.rank(); ++d)
        if (shape[d] != item.shape()[d]) shape[d] = -1;
    first = false;
  }
  return !first;
}

Shape list_stacked_shape(const TensorList& l, const Shape& fallback_elem_shape) {
  Shape out = l.elem_shape_known ? l.elem_shape : fallback_elem_shape;
  const bool written = std::any_of(l.items.begin(), l.items.end(), [](const Tensor& t) { return t.has_value(); });
  if (!l.infer_shape && written) {
    const bool one_shape = list_element_type(l, out) && std::all_of(out.begin(), out.end(), [](int64_t d) { return d >= 0; });
    if (!one_shape)
      throw InvalidArgumentError(
          "TensorArray::stack: the elements have different shapes (a TensorArray made with infer_shape = false)");
  }
  for (int64_t& d : out)
    if (d < 0) d = 0;
  out.insert(0, l.size);
  return out;
}

const void* list_stacked_data(const TensorList& l) {
  if (l.infer_shape) return l.elem_shape_known ? l.data.data() : nullptr;
  Shape elem;
  if (!list_element_type(l, elem)) return nullptr;
  const size_t bytes = static_cast<size_t>(elem.num_elements()) * dtype_size(l.elem_dtype);
  l.stacked.assign(bytes * static_cast<size_t>(l.size), std::byte{0});  // unwritten elements: zeros
  for (size_t i = 0; i < l.items.size(); ++i)
    if (l.items[i].has_value() && bytes) std::memcpy(l.stacked.data() + i * bytes, detail::impl_of(l.items[i])->data, bytes);
  return l.stacked.data();
}

void list_write_in_place(TensorList& l, int64_t index, const Tensor& value, SourceLoc loc) {
  if (value.dtype() != l.elem_dtype)
    throw TypeError(fmt::format("TensorArray::write: the TensorArray holds {} but the value is {}{}",
                                dtype_name(l.elem_dtype), dtype_name(value.dtype()), at(loc)));
  list_write(l, index, detail::impl_of(value)->data, value.shape(), loc);
}

Tensor list_read(const TensorList& l, int64_t index, SourceLoc loc) {
  const std::byte* src = list_element(l, index, loc);
  Tensor out = make_tensor(l.elem_dtype, list_element_shape(l, index));
  if (const size_t bytes = static_cast<size_t>(out.num_elements()) * dtype_size(l.elem_dtype))
    std::memcpy(detail::impl_of(out)->data, src, bytes);
  return out;
}

Tensor list_stack(const TensorList& l, const Shape& fallback_elem_shape) {
  Tensor out = make_tensor(l.elem_dtype, list_stacked_shape(l, fallback_elem_shape));
  const size_t bytes = static_cast<size_t>(out.num_elements()) * dtype_size(l.elem_dtype);
  if (bytes == 0) return out;
  if (const void* data = list_stacked_data(l)) std::memcpy(detail::impl_of(out)->data, data, bytes);
  else std::memset(detail::impl_of(out)->data, 0, bytes);  // nothing written: zeros of the fallback shape
  return out;
}

Tensor list_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& type, SourceLoc loc) {
  (void)attrs;
  const TensorList& l = list_of(in[0]);
  switch (op) {
    case OpKind::ListWrite: {
      Tensor handle = unshared_list(in[0]);
      list_write_in_place(list_of(handle), index_of(in[1]), in[2], loc);
      return handle;
    }
    case OpKind::ListRead: return list_read(l, index_of(in[1]), loc);
    case OpKind::ListStack: {
      Shape fallback(type.shape.begin() + 1, type.shape.end());
      return list_stack(l, fallback);
    }
    case OpKind::ListSize: return Tensor(static_cast<int32_t>(l.size));
    default: throw InternalError("list_kernel: " + std::string(op_name(op)));
  }
}

}  // namespace ag::detail
