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
// The stacked shape: [size] + the element shape, or + `fallback` (unknown dims 0) before any write.
Shape list_stacked_shape(const TensorList& l, const Shape& fallback_elem_shape);

}  // namespace ag::detail
