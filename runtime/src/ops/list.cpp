// TensorArray kernels: functional updates of a TensorList (in place when nobody else holds it).
#include <cstring>
#include <fmt/format.h>

#include "../tensor/tensor_list.h"
#include "kernels.h"

namespace ag::detail {
namespace {

int64_t index_of(const Tensor& t) { return element_as_int(t, 0); }

Tensor zeros_of(DType dtype, const Shape& shape) {
  Tensor z = make_tensor(dtype, shape);
  std::memset(z.impl()->data, 0, static_cast<size_t>(shape.num_elements()) * dtype_size(dtype));
  return z;
}

bool is_unique(const Tensor& handle) {
  const TensorImpl* impl = handle.impl();
  return impl->refs.load(std::memory_order_acquire) == 1 &&
         impl->storage->refs.load(std::memory_order_acquire) == 1 &&
         list_of(handle).refs.load(std::memory_order_acquire) == 1;
}

}  // namespace

void list_write_in_place(TensorList& l, int64_t index, const Tensor& value, SourceLoc loc) {
  if (index < 0 || (!l.dynamic_size && index >= static_cast<int64_t>(l.items.size())))
    throw InvalidArgumentError(fmt::format("TensorArray::write: index {} is out of range for a TensorArray of size {}{}",
                                           index, l.items.size(), at(loc)));
  if (value.dtype() != l.elem_dtype)
    throw TypeError(fmt::format("TensorArray::write: the TensorArray holds {} but the value is {}{}",
                                dtype_name(l.elem_dtype), dtype_name(value.dtype()), at(loc)));
  if (l.elem_shape_known && !(l.elem_shape == value.shape()))  // a shape error, as in the traced type rule
    throw ValueError(fmt::format("TensorArray::write: elements have shape {} but the value has shape {}{}",
                                 l.elem_shape.str(), value.shape().str(), at(loc)));
  l.elem_shape = value.shape();
  l.elem_shape_known = true;
  if (index >= static_cast<int64_t>(l.items.size())) l.items.resize(static_cast<size_t>(index) + 1);
  l.items[static_cast<size_t>(index)] = value;
}

Tensor list_read(const TensorList& l, int64_t index, SourceLoc loc) {
  if (index < 0 || index >= static_cast<int64_t>(l.items.size()))
    throw InvalidArgumentError(fmt::format("TensorArray::read: index {} is out of range for a TensorArray of size {}{}",
                                           index, l.items.size(), at(loc)));
  const Tensor& item = l.items[static_cast<size_t>(index)];
  if (item.has_value()) return item;
  if (l.elem_shape_known) return zeros_of(l.elem_dtype, l.elem_shape);
  throw InvalidArgumentError(fmt::format("TensorArray::read: element {} was never written{}", index, at(loc)));
}

Tensor list_stack(const TensorList& l, const Shape& fallback_elem_shape) {
  Shape elem = l.elem_shape_known ? l.elem_shape : fallback_elem_shape;
  for (int64_t& d : elem)
    if (d < 0) d = 0;
  Shape out = elem;
  out.insert(0, static_cast<int64_t>(l.items.size()));
  Tensor t = make_tensor(l.elem_dtype, out);
  const size_t bytes = static_cast<size_t>(elem.num_elements()) * dtype_size(l.elem_dtype);
  char* dst = static_cast<char*>(t.impl()->data);
  for (const Tensor& item : l.items) {
    if (item.has_value()) std::memcpy(dst, item.impl()->data, bytes);
    else std::memset(dst, 0, bytes);
    dst += bytes;
  }
  return t;
}

Tensor list_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& type, SourceLoc loc) {
  (void)attrs;
  const TensorList& l = list_of(in[0]);
  switch (op) {
    case OpKind::ListWrite: {
      if (is_unique(in[0])) {
        list_write_in_place(const_cast<TensorList&>(l), index_of(in[1]), in[2], loc);
        return in[0];
      }
      TensorList* copy = writable_list(in[0]);
      Tensor handle = make_list_tensor(copy);
      list_write_in_place(*copy, index_of(in[1]), in[2], loc);
      return handle;
    }
    case OpKind::ListRead: return list_read(l, index_of(in[1]), loc);
    case OpKind::ListStack: {
      Shape fallback(type.shape.begin() + 1, type.shape.end());
      return list_stack(l, fallback);
    }
    case OpKind::ListSize: return Tensor(static_cast<int32_t>(l.items.size()));
    default: throw InternalError("list_kernel: " + std::string(op_name(op)));
  }
}

}  // namespace ag::detail
