// TensorList: the value behind a TensorArray handle (a concrete List-dtype tensor).
//
// The elements live in one contiguous row-major buffer, [size] + element shape, as in a stacked
// tensor: a write is one copy into it, a read one copy out, stack() one copy of the whole. The
// eager kernels (ops/list.cpp) and the JIT's typed helpers (jit/src/rt_list_helpers.cpp) share
// the functions below, so a TensorArray behaves the same on every backend.
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

#include "ag/tensor.h"

namespace ag::detail {

struct TensorList {
  std::atomic<int32_t> refs{1};
  DType elem_dtype = DType::Float32;
  Shape elem_shape;  // dims may be -1 until the first write fixes them
  bool elem_shape_known = false;
  bool dynamic_size = true;
  int64_t size = 0;
  // size * element bytes once the element shape is known, else empty. Unwritten elements are
  // zeros: reading one gives zeros of the element shape, as TensorFlow does.
  std::vector<std::byte> data;
  // infer_shape = false (tf.TensorArray's infer_shape): elements may differ in shape (a loop
  // variable whose shape changes, saved for its gradient). Each element is its own tensor in
  // `items` and `data` stays empty; stack() needs them to agree.
  bool infer_shape = true;
  std::vector<Tensor> items;
  mutable std::vector<std::byte> stacked;  // stack() of such a list: its elements, contiguous

  int64_t elem_bytes() const { return elem_shape.num_elements() * static_cast<int64_t>(dtype_size(elem_dtype)); }
  const std::byte* elem(int64_t i) const { return data.data() + i * elem_bytes(); }
  // Grows (or sets) the element count; new elements are zeros.
  void resize(int64_t n);

  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

// A concrete List tensor owning (one reference to) `list`.
Tensor make_list_tensor(TensorList* list);
TensorList& list_of(const Tensor& handle);
// A copy of `handle`'s list, owned by the caller.
TensorList* writable_list(const Tensor& handle);
// `handle` itself if nobody else holds its list (a write may change it in place), else a handle
// to a copy.
Tensor unshared_list(const Tensor& handle);

// The TensorArray operations on a list, with the eager error messages. `value` is row-major
// data of `elem_dtype` and `shape`.
void list_write(TensorList& l, int64_t index, const void* value, const Shape& shape, SourceLoc loc);
// The element's data (valid until the list changes); throws for an index out of range or an
// element never written whose shape is unknown.
const std::byte* list_element(const TensorList& l, int64_t index, SourceLoc loc);
// The shape of element `index` (after list_element checked it).
const Shape& list_element_shape(const TensorList& l, int64_t index);
// The stacked shape: [size] + the element shape, or + `fallback` (unknown dims 0) before any write.
Shape list_stacked_shape(const TensorList& l, const Shape& fallback_elem_shape);
// The stacked elements, contiguous (null: nothing written, zeros), valid until the list changes.
const void* list_stacked_data(const TensorList& l);
// The element shape a graph sees for the list: false when it has no rank yet (nothing written;
// elements of different ranks).
bool list_element_type(const TensorList& l, Shape& shape);

}  // namespace ag::detail
