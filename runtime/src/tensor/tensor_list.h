// TensorList: the value behind a TensorArray handle (a concrete List-dtype tensor).
#pragma once

#include <atomic>
#include <vector>

#include "ag/tensor.h"

namespace ag::detail {

struct TensorList {
  std::atomic<int32_t> refs{1};
  DType elem_dtype = DType::Float32;
  Shape elem_shape;  // dims may be -1 until the first write fixes them
  bool elem_shape_known = false;
  bool dynamic_size = true;
  std::vector<Tensor> items;  // unwritten slots have no value

  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
};

// A concrete List tensor owning (one reference to) `list`.
Tensor make_list_tensor(TensorList* list);
TensorList& list_of(const Tensor& handle);
// A list that may be modified: `handle`'s own if nobody else holds it, else a copy.
TensorList* writable_list(const Tensor& handle);

}  // namespace ag::detail
