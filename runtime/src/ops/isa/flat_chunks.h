// The pieces a large elementwise op runs in (elementwise.cpp): one-dimensional views of its
// operands and result, and the copy that writes a piece computed in a scratch buffer out to the
// result around the cache. Included by a kernel ISA's translation unit, so stream_copy uses that
// level's widest vectors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "isa_kernels.h"

namespace ag::detail::AG_KERNEL_NS {

inline size_t byte_offset(const Tensor& t) {
  return static_cast<size_t>(static_cast<const char*>(t.impl()->data) - static_cast<const char*>(t.impl()->storage->data));
}

// `t`'s elements [begin, end) as a one-dimensional view; a one-element operand stays whole
// (as a scalar: it broadcasts against any chunk).
inline Tensor chunk_of(const Tensor& t, int64_t begin, int64_t end) {
  if (t.num_elements() == 1) return t.rank() == 0 ? t : make_view(t.impl()->storage, byte_offset(t), t.dtype(), Shape{});
  return make_view(t.impl()->storage, byte_offset(t) + static_cast<size_t>(begin) * dtype_size(t.dtype()), t.dtype(),
                   Shape{end - begin});
}

// Points `view` (one-dimensional, made by chunk_of, held by this thread only) at `len`
// elements from `data`: a streamed piece's views are re-aimed, not made again.
inline void re_aim(const Tensor& view, void* data, int64_t len) {
  TensorImpl* v = view.impl();
  v->data = data;
  if (v->shape[0] != len) v->shape = Shape{len};
}

// Element `i` of `t`.
inline void* element(const Tensor& t, int64_t i) {
  return static_cast<char*>(t.impl()->data) + static_cast<size_t>(i) * dtype_size(t.dtype());
}

// Copies `bytes` from `src` to `dst` (64-byte aligned) with non-temporal stores for the whole
// 64-byte blocks and plain ones for the rest. The caller fences (_mm_sfence) before another
// thread may read `dst`: the stores are weakly ordered.
inline void stream_copy(void* dst, const void* src, size_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
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
