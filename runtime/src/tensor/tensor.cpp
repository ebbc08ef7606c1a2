// Tensor handles, storage and the concrete/symbolic/undefined states.
#include "ag/tensor.h"

#include <cstring>
#include <new>
#include <utility>

#include "ag/construct.h"
#include "ag/detail/out_of_memory.h"
#include "ag/ops.h"
#include "../ops/internal_ops.h"
#include "allocator.h"
#include "ag/detail/tape.h"
#include "ag/detail/parked_tensor.h"
#include "ag/detail/tensor_list.h"

namespace ag::detail {

void destroy_external(Storage* s);  // external.cpp

namespace {
constexpr size_t kHeader = 64;  // Storage header padded so inline data stays 64-byte aligned
static_assert(sizeof(Storage) <= kHeader);
// A tensor header padded the same way, for tensors allocated in one block with their storage.
constexpr size_t kImplHeader = (sizeof(TensorImpl) + 63) / 64 * 64;

size_t inline_block_bytes(size_t bytes) { return kHeader + (bytes ? bytes : 1); }

// The block of a storage allocated together with its first tensor: [TensorImpl][Storage][data].
char* block_of(Storage* s) { return reinterpret_cast<char*>(s) - kImplHeader; }
bool shares_block(const TensorImpl* impl, const Storage* s) {
  return (s->flags & Storage::kWithImpl) && reinterpret_cast<const char*>(s) == reinterpret_cast<const char*>(impl) + kImplHeader;
}

}  // namespace

// The last small tensor this thread destroyed (parked_tensor.h), kept whole: its header, storage
// and data block with both counts still 1. The next make_tensor of the same dtype and shape on
// this thread takes it back without building anything. A loop that makes a tensor and drops the
// previous one pays a compare instead of an allocation and a free: a cached call assigned to
// the same variable (docs/performance.md, "Measured decisions": parked tensor), an eager op's
// temporary in a loop. At most one block (<= kSmallMax bytes) per thread.
constinit thread_local ParkedTensor t_parked_tensor{};

namespace {

struct ParkedReaper {
  ~ParkedReaper() {
    ParkedTensor& p = t_parked_tensor;
    p.state = ParkedTensor::kGone;
    if (TensorImpl* impl = std::exchange(p.impl, nullptr)) impl->destroy_unparked();
  }
  void arm() {}
};
thread_local ParkedReaper t_parked_reaper;

// Parks `impl`; the tensor parked before, if any, is freed: the most recent shape is the one a
// loop makes next.
void park_ready(ParkedTensor& p, TensorImpl* impl) {
  TensorImpl* previous = std::exchange(p.impl, impl);
  if (previous) previous->destroy_unparked();
}

// Parks `impl` on the thread's first park (which constructs its reaper); destroys it when the
// reaper ran (the thread can no longer park).
[[gnu::noinline]] void park_first(TensorImpl* impl) {
  ParkedTensor& p = t_parked_tensor;
  if (p.state == ParkedTensor::kGone) return impl->destroy_unparked();
  p.state = ParkedTensor::kReady;
  t_parked_reaper.arm();  // odr-use: constructs the thread's reaper
  park_ready(p, impl);
}

}  // namespace

// Buffers below kPoolThreshold live inline after their header: one block, from the small-block
// cache when it is small enough (the common case of eager ops on small tensors).
Storage* Storage::allocate(size_t bytes) {
  if (bytes < kPoolThreshold) {
    const size_t block_bytes = inline_block_bytes(bytes);
    void* block = block_bytes <= kSmallMax ? small_allocate(block_bytes)
                                           : ::operator new(block_bytes, std::align_val_t(64));
    auto* s = new (block) Storage;
    s->flags = kInline;
    s->bytes = bytes;
    s->data = static_cast<char*>(block) + kHeader;
    return s;
  }
  void* data = pool_allocate(bytes);
  auto* s = new Storage;
  s->flags = kPooled;
  s->bytes = bytes;
  s->data = data;
  return s;
}

void Storage::destroy() {
  if (flags & kHoldsList) (*static_cast<TensorList**>(data))->release();
  if (flags & kWithImpl) {  // its tensor header is dead too (it held a reference)
    const size_t block_bytes = kImplHeader + inline_block_bytes(bytes);
    char* block = block_of(this);
    this->~Storage();
    small_free(block, block_bytes);
    return;
  }
  if (flags & kInline) {
    const size_t block_bytes = inline_block_bytes(bytes);
    this->~Storage();
    if (block_bytes <= kSmallMax) small_free(this, block_bytes);
    else ::operator delete(static_cast<void*>(this), std::align_val_t(64));
    return;
  }
  if (flags & kExternal) {  // its owner's release hook, exactly once (external.cpp)
    destroy_external(this);
    return;
  }
  if (flags & kPooled) pool_free(data, bytes);
  delete this;
}

void* TensorImpl::operator new(size_t bytes) { return small_allocate(bytes); }
void TensorImpl::operator delete(void* p, size_t bytes) { small_free(p, bytes); }

void TensorImpl::destroy() {
  if (parkable && sole_owner(storage->refs)) [[likely]] {
    ParkedTensor& p = t_parked_tensor;
    if (p.state == ParkedTensor::kReady) [[likely]] {
      // Parks this tensor (its block holds it and its storage's only reference). park_ready
      // spelled out, every call a tail call: the common case (a loop's previous result parked)
      // saves no register.
      TensorImpl* previous = std::exchange(p.impl, this);
      if (previous) [[unlikely]]
        previous->destroy_unparked();
      return;
    }
    return park_first(this);
  }
  destroy_unparked();
}

void TensorImpl::destroy_unparked() {
  Storage* s = storage;
  if (frame) release_token(frame);
  delete note;
  if (s && shares_block(this, s)) {
    // The block goes when its storage does (now, unless a view still holds the storage).
    this->~TensorImpl();
    s->release();
    return;
  }
  if (s) s->release();
  delete this;
}

namespace {

// make_tensor when no parked tensor fits: a new block (out of line, so that a cached call that
// takes its parked output back does not set up this path's frame).
[[gnu::noinline]] Tensor make_new_tensor(DType dtype, const Shape& shape) {
  // A byte count that overflows would allocate a small buffer for a huge tensor: it is out of
  // memory as much as a count that fits but cannot be mapped.
  size_t bytes = dtype_size(dtype);
  bool overflow = false, empty = false;
  for (int64_t d : shape) {
    if (d < 0) throw InternalError("make_tensor: concrete shape with unknown dim " + shape.str());
    overflow |= __builtin_mul_overflow(bytes, static_cast<size_t>(d), &bytes);
    empty |= d == 0;
  }
  if (empty) bytes = 0;
  else if (overflow) [[unlikely]] throw TensorAllocationFailure(dtype, shape);
  TensorImpl* impl;
  if (kImplHeader + inline_block_bytes(bytes) <= kSmallMax) {
    // Small: the tensor header, the storage and the data in one block (one allocation and one
    // free instead of two: every eager op result and cached-call output is such a tensor).
    char* block = static_cast<char*>(small_allocate(kImplHeader + inline_block_bytes(bytes)));
    impl = ::new (block) TensorImpl;
    auto* st = ::new (block + kImplHeader) Storage;
    st->flags = Storage::kInline | Storage::kWithImpl;
    st->bytes = bytes;
    st->data = block + kImplHeader + kHeader;
    impl->storage = st;
    impl->parkable = true;
  } else {
    Storage* st;
    try {
      st = Storage::allocate(bytes);  // first: a buffer too large to allocate leaks nothing
    } catch (const std::bad_alloc&) {
      throw TensorAllocationFailure(dtype, shape);
    }
    try {
      impl = new TensorImpl;
    } catch (...) {
      st->release();
      throw;
    }
    impl->storage = st;
  }
  impl->dtype = dtype;
  impl->shape = shape;
  impl->data = impl->storage->data;
  return detail::adopt(impl);
}

}  // namespace

Tensor make_tensor(DType dtype, const Shape& shape) {
  if (TensorImpl* impl = unpark(dtype, shape)) [[likely]]
    return detail::adopt(impl);
  return make_new_tensor(dtype, shape);
}

Tensor make_view(Storage* storage, size_t byte_offset, DType dtype, const Shape& shape) {
  auto* impl = new TensorImpl;
  impl->dtype = dtype;
  impl->shape = shape;
  storage->retain();
  impl->storage = storage;
  impl->data = static_cast<char*>(storage->data) + byte_offset;
  return detail::adopt(impl);
}

Tensor make_undefined(std::string message) {
  auto* impl = new TensorImpl;
  impl->kind = ImplKind::Undefined;
  impl->note = new std::string(std::move(message));
  return detail::adopt(impl);
}

void throw_undefined(const Tensor& t, const char* what, SourceLoc loc) {
  std::string where = loc.known() ? " (at " + loc.str() + ")" : "";
  if (!detail::impl_of(t))
    throw ValueError(std::string(what) + ": the tensor has no value (a default-constructed ag::Tensor)" + where);
  if (detail::impl_of(t)->note) throw ConversionError(*detail::impl_of(t)->note + where);
  throw ValueError(std::string(what) + ": the tensor has no value" + where);
}

void require_concrete(const Tensor& t, const char* what) {
  if (!t.has_value()) throw_undefined(t, what, {});
  if (t.is_symbolic())
    throw ConversionError(std::string(what) +
                          " needs a concrete tensor, but this one is symbolic (it is being traced into a "
                          "graph); its value exists only when the compiled function runs");
}

double element_as_double(const Tensor& t, int64_t i) {
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return convert_value<double>(static_cast<const T*>(detail::impl_of(t)->data)[i]);
  });
}

int64_t element_as_int(const Tensor& t, int64_t i) {
  return visit_dtype(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    return convert_value<int64_t>(static_cast<const T*>(detail::impl_of(t)->data)[i]);
  });
}

void throw_data_type_mismatch(DType actual, DType t_dtype, size_t t_size) {
  static constexpr const char* kCxxType[] = {"bool",    "int32_t", "int64_t",      "float",         "double",
                                             "?",       "uint8_t", "int8_t",       "ag::Float16",   "ag::BFloat16"};
  // T's own dtype when it has one of that size; otherwise just its size (uint32_t, char, ...).
  const std::string t_name = t_size == dtype_size(t_dtype) ? std::string(dtype_name(t_dtype))
                                                           : "a " + std::to_string(t_size) + "-byte type with no dtype";
  throw TypeError("data<T>(): the tensor's dtype is " + std::string(dtype_name(actual)) + " but T is " + t_name +
                  "; use data<" + kCxxType[static_cast<int>(actual)] + ">() or ag::cast");
}

// ---- TensorList ----

Tensor make_list_tensor(TensorList* list) {
  auto* impl = new TensorImpl;
  impl->dtype = DType::List;
  impl->storage = Storage::allocate(sizeof(TensorList*));
  impl->storage->flags |= Storage::kHoldsList;
  *static_cast<TensorList**>(impl->storage->data) = list;
  impl->data = impl->storage->data;
  return detail::adopt(impl);
}

TensorList& list_of(const Tensor& handle) {
  if (handle.dtype() != DType::List || handle.is_symbolic())
    throw InternalError("list_of: not a concrete TensorArray handle");
  return **static_cast<TensorList* const*>(detail::impl_of(handle)->data);
}

TensorList* writable_list(const Tensor& handle) {
  TensorList& l = list_of(handle);
  auto* copy = new TensorList;
  copy->elem_dtype = l.elem_dtype;
  copy->elem_shape = l.elem_shape;
  copy->elem_shape_known = l.elem_shape_known;
  copy->dynamic_size = l.dynamic_size;
  copy->size = l.size;
  copy->data = l.data;
  copy->infer_shape = l.infer_shape;
  copy->items = l.items;  // (immutable: a write replaces an item)
  return copy;
}

}  // namespace ag::detail

namespace ag {

Tensor Tensor::make_scalar(DType dtype, double fvalue, int64_t ivalue) {
  Tensor t = detail::make_tensor(dtype, Shape{});
  void* p = detail::impl_of(t)->data;
  switch (dtype) {
    case DType::List: throw InternalError("make_scalar of List");
    default:
      visit_dtype(dtype, [&](auto tag) {
        using T = decltype(tag);
        if constexpr (std::is_floating_point_v<T> || is_half_float_v<T>) *static_cast<T*>(p) = detail::convert_value<T>(fvalue);
        else *static_cast<T*>(p) = detail::convert_value<T>(ivalue);
      });
  }
  return t;
}

void Tensor::throw_no_value() const { detail::throw_undefined(*this, "ag::Tensor", {}); }


Tensor::operator bool() const {
  if (!has_value()) detail::throw_undefined(*this, "converting a tensor to bool", {});
  if (is_symbolic())
    throw ConversionError(
        "a symbolic tensor cannot be converted to bool: this control flow (if/while/&&/||/!/?:) depends on a "
        "tensor being traced into a graph. Mark the function AG_FUNCTION and build it through ag-rewrite "
        "(ag_rewrite_sources in CMake) so the control flow is converted, or use ag::cond / ag::while_loop");
  if (num_elements() != 1)
    throw ValueError("the truth value of a tensor with shape " + shape().str() +
                     " is ambiguous; use ag::reduce_any or ag::reduce_all");
  return detail::element_as_double(*this, 0) != 0;
}

Tensor Tensor::operator[](int64_t i) const {
  const Shape& s = shape();
  if (s.rank() == 0) throw ValueError("x[i]: cannot index a scalar tensor (shape [])");
  const int64_t n = s[0];
  // (A tape records ops, so under one an eager index is a gather, not an unrecorded view.)
  if (is_symbolic() || dtype() == DType::List || detail::tapes_alive()) {
    // A negative index counts from the end, as eagerly: at trace time when dim 0 is static,
    // else in the graph (gather itself takes no negative indices). operator[] cannot take a
    // location, so the gather gets its frame's (the enclosing construct's line).
    using detail::op;
    if (i < 0 && n < 0) {
      const Tensor dim0 = op(OpKind::Gather, {op(OpKind::ShapeOf, {*this}, {}), Tensor(int64_t{0})}, {});
      return op(OpKind::Gather, {*this, op(OpKind::Add, {Tensor(i), dim0}, {})}, {});
    }
    if (i < 0 && i + n >= 0) return op(OpKind::Gather, {*this, Tensor(i + n)}, {});
    if (i >= 0) return op(OpKind::Gather, {*this, Tensor(i)}, {});
  }
  const int64_t j = i < 0 ? i + n : i;
  if (j < 0 || j >= n)
    throw InvalidArgumentError("x[" + std::to_string(i) + "]: index out of range for dimension 0 of size " +
                               std::to_string(n) + " (shape " + s.str() + ")");
  Shape rest(s.begin() + 1, s.end());
  const size_t offset = static_cast<size_t>(j * rest.num_elements()) * dtype_size(dtype()) +
                        static_cast<size_t>(static_cast<char*>(impl_->data) - static_cast<char*>(impl_->storage->data));
  return detail::make_view(impl_->storage, offset, dtype(), rest);
}

Tensor Tensor::operator[](const Tensor& i) const { return detail::op(OpKind::Gather, {*this, i}, {}); }

Tensor::iterator Tensor::begin() const {
  if (is_symbolic())
    throw ConversionError(
        "cannot iterate over a symbolic tensor in plain C++: mark the function AG_FUNCTION so ag-rewrite "
        "converts this range-for into a staged loop (ag::for_stmt)");
  if (rank() == 0) throw ValueError("cannot iterate over a scalar tensor");
  return iterator(this, 0);
}

Tensor::iterator Tensor::end() const {
  if (is_symbolic() || rank() == 0) return begin();
  return iterator(this, shape()[0]);
}

}  // namespace ag
