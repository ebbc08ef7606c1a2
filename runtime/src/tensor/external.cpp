// Tensors over external memory: a Storage flagged kExternal whose release hook runs once, when it dies.
#include "ag/external.h"

#include <cstdint>
#include <fmt/format.h>

namespace ag::detail {

// The storage of external memory: the common header, and the hook that gives the memory back.
// Storage::destroy hands a kExternal storage to destroy_external.
struct ExternalStorage : Storage {
  ReleaseFn release_fn = nullptr;
  void* release_ctx = nullptr;
};

void destroy_external(Storage* s) {
  auto* e = static_cast<ExternalStorage*>(s);
  if (e->release_fn) e->release_fn(e->release_ctx);
  delete e;
}

namespace {

// The owner of the shared_ptr overload: one heap copy, deleted by the release hook.
void release_shared_owner(void* context) { delete static_cast<std::shared_ptr<const void>*>(context); }

// Every check comes before anything is allocated, so a throw leaves the memory the caller's.
void check_external(const void* data, DType dtype, const Shape& shape, const char* what) {
  if (dtype == DType::List) throw TypeError(fmt::format("{}: a TensorArray handle cannot view external memory", what));
  for (int64_t d : shape)
    if (d < 0) throw ValueError(fmt::format("{}: the shape {} has a negative dim", what, shape.str()));
  const size_t elem = dtype_size(dtype);
  if (shape.num_elements() > 0 && data == nullptr)
    throw ValueError(fmt::format("{}: the data pointer is null but the shape {} has {} elements", what, shape.str(),
                                 shape.num_elements()));
  // Element alignment is all the kernels and compiled code rely on (they never assume 16 or 64).
  if (reinterpret_cast<uintptr_t>(data) % elem != 0)
    throw ValueError(fmt::format("{}: the data pointer {} is not aligned to the {}-byte elements of {}: copy the data "
                                 "into an aligned buffer first",
                                 what, data, elem, dtype_name(dtype)));
}

}  // namespace

Tensor make_external(const void* data, DType dtype, const Shape& shape, ReleaseFn release, void* context,
                     const char* what) {
  check_external(data, dtype, shape, what);
  auto* s = new ExternalStorage;
  s->flags = Storage::kExternal;
  s->bytes = static_cast<size_t>(shape.num_elements()) * dtype_size(dtype);
  // agc never writes through it: the paths that update a sole-owned buffer in place (a
  // Variable's value in compiled code: writable_value in jit/src/rt_state_helpers.cpp) check
  // kExternal and copy instead.
  s->data = const_cast<void*>(data);
  s->release_fn = release;
  s->release_ctx = context;
  TensorImpl* impl;
  try {
    impl = new TensorImpl;
  } catch (...) {
    s->release_fn = nullptr;  // the caller keeps its memory when this throws
    s->release();
    throw;
  }
  impl->dtype = dtype;
  impl->shape = shape;
  impl->storage = s;
  impl->data = s->data;
  return detail::adopt(impl);
}

Tensor make_external(const void* data, DType dtype, const Shape& shape, std::shared_ptr<const void> owner,
                     const char* what) {
  check_external(data, dtype, shape, what);
  auto* held = new std::shared_ptr<const void>(std::move(owner));
  try {
    return make_external(data, dtype, shape, release_shared_owner, held, what);
  } catch (...) {
    delete held;
    throw;
  }
}

const void* exported_data(const Tensor& t, const char* what) {
  require_concrete(t, what);
  if (t.dtype() == DType::List)
    throw TypeError(fmt::format("{}: a TensorArray handle has no data to view; use TensorArray::stack() first", what));
  return detail::impl_of(t)->data;
}

}  // namespace ag::detail

namespace ag {

Tensor from_external(const void* data, DType dtype, const Shape& shape, ReleaseFn release, void* context) {
  return detail::make_external(data, dtype, shape, release, context, "ag::from_external");
}

Tensor from_external(const void* data, DType dtype, const Shape& shape, std::shared_ptr<const void> owner) {
  return detail::make_external(data, dtype, shape, std::move(owner), "ag::from_external");
}

bool is_external(const Tensor& t) {
  return t.has_value() && !t.is_symbolic() && detail::impl_of(t)->storage && (detail::impl_of(t)->storage->flags & detail::Storage::kExternal);
}

}  // namespace ag
