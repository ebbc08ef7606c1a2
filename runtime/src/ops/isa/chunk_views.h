// The pieces a large elementwise op runs in (elementwise_parallel.cpp): views of its operands
// and result re-aimed from piece to piece, and the copy that writes a piece computed in a
// scratch buffer out to the result around the cache. Included by a kernel ISA's translation
// unit, so stream_copy uses that level's widest vectors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "isa_kernels.h"

namespace ag::detail::AG_KERNEL_NS {

// Element `i` of `t`.
inline void* element(const Tensor& t, int64_t i) {
  return static_cast<char*>(detail::impl_of(t)->data) + static_cast<size_t>(i) * dtype_size(t.dtype());
}

// A view of `t`'s storage (a tensor header only this thread holds), to be aimed with re_aim.
inline Tensor view_of(const Tensor& t) {
  const size_t offset = static_cast<size_t>(static_cast<const char*>(detail::impl_of(t)->data) -
                                            static_cast<const char*>(detail::impl_of(t)->storage->data));
  return make_view(detail::impl_of(t)->storage, offset, t.dtype(), t.shape());
}

// Points `view` (made by view_of) at `data` with `shape`: a piece's views are re-aimed, not
// made again: a piece is little work (docs/performance.md, "Measured decisions": piece views).
inline void re_aim(const Tensor& view, void* data, const Shape& shape) {
  TensorImpl* v = detail::impl_of(view);
  v->data = data;
  if (v->shape != shape) v->shape = shape;
}

// Copies `bytes` from `src` to `dst` with non-temporal stores for the 64-byte blocks of `dst`
// it covers whole and plain ones for the partial blocks at either end (which another piece may
// share). The caller fences (_mm_sfence) before another thread may read `dst`: the stores are
// weakly ordered.
inline void stream_copy(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  const size_t head = std::min(bytes, (64 - reinterpret_cast<uintptr_t>(d) % 64) % 64);
  std::memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  const size_t whole = bytes / 64 * 64;
#if defined(__AVX512F__)
  for (size_t i = 0; i < whole; i += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(d + i), _mm512_loadu_si512(s + i));
#elif defined(__AVX__)
  for (size_t i = 0; i < whole; i += 32)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + i), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + i)));
#elif defined(__x86_64__)
  for (size_t i = 0; i < whole; i += 16)
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
#else
  std::memcpy(d, s, whole);
#endif
  std::memcpy(d + whole, s + whole, bytes - whole);
}

inline void store_fence() {
#if defined(__x86_64__)
  _mm_sfence();
#endif
}

}  // namespace ag::detail::AG_KERNEL_NS
