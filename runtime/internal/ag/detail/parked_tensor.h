// The thread's parked tensor (tensor.cpp): the last small tensor it destroyed, kept whole so
// that the next make_tensor of the same dtype and shape takes it back without an allocation.
// Here so that the cached call's output (jit/src/backend.cpp) takes it back inline: a call
// less on the path every cached call takes.
#pragma once

#include "ag/detail/tensor_impl.h"

namespace ag::detail {

// Trivially destructible and constant-initialized, so that reaching it costs no TLS guard or
// wrapper call, and it stays readable while thread_local objects are destroyed; a reaper in
// tensor.cpp frees what it holds when the thread ends.
struct ParkedTensor {
  enum State : uint8_t { kNoReaper, kReady, kGone };  // kGone: the reaper ran, nothing is parked any more
  TensorImpl* impl;
  State state;
};
extern constinit thread_local ParkedTensor t_parked_tensor;

// The parked tensor when it has this dtype and shape (taken out of the slot, its count 1), else
// null.
inline TensorImpl* unpark(DType dtype, const Shape& shape) {
  ParkedTensor& p = t_parked_tensor;
  TensorImpl* impl = p.impl;
  if (!impl || impl->dtype != dtype || impl->shape != shape) return nullptr;
  p.impl = nullptr;
  impl->refs.store(1, std::memory_order_relaxed);  // 0 when the last release was a decrement
  impl->data = impl->storage->data;
  return impl;
}

}  // namespace ag::detail
