// The runtime functions JIT code calls: buffers, outputs, errors, slot moves, integer powers, matmul packing
// (state and TensorArrays: rt_state_helpers.cpp, rt_list_helpers.cpp). None of them lets an exception escape into JIT
// code: errors are recorded in the call state and the code returns 1.
#include <cstring>
#include <exception>

#include <fmt/format.h>

#include "ag/detail/kernel_set.h"
#include "ag/detail/loop_splits.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/out_of_memory.h"
#include "ag/detail/parallel.h"
#include "call_state.h"

namespace ag::jit {
namespace {

CallState& state_of(JitCallCtx* ctx) { return *ctx->state; }

Shape shape_from(const int64_t* dims, int64_t rank) { return Shape(std::span<const int64_t>(dims, static_cast<size_t>(rank))); }

// base^exponent (exponent >= 0) by squaring, wrapping like the eager kernel.
template <class T>
T wrapping_pow(T base, T exponent) {
  using U = std::make_unsigned_t<T>;
  U result = 1, b = static_cast<U>(base);
  for (T e = exponent; e > 0; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

// A buffer could not be allocated. The code follows up with agc_rt_out_of_memory, which names
// the value; this is what remains should it not.
std::exception_ptr allocation_failure(int64_t bytes) {
  return std::make_exception_ptr(
      ResourceExhaustedError(fmt::format("compiled function: out of memory allocating {} bytes", bytes)));
}

// agc_rt_pack_gemm_lhs with the segment's width and the vector's lanes known to the compiler:
// each row's fill is one or two vector stores, and a vector's rows are unrolled
// (docs/performance.md, "Measured decisions": static packing widths).
template <class T, int64_t Width, int64_t Lanes>
void pack_gemm_lhs(const T* src, T* dst, int64_t m, int64_t k) {
  constexpr int64_t kRows = Lanes / Width;
  using Fill [[gnu::vector_size(Width * sizeof(T))]] = T;
  for (int64_t row0 = 0; row0 < m; row0 += kRows)
    for (int64_t kk = 0; kk < k; ++kk, dst += Lanes)
      for (int64_t r = 0; r < kRows; ++r) {
        const Fill fill = Fill{} + (row0 + r < m ? src[(row0 + r) * k + kk] : T(0));
        std::memcpy(dst + r * Width, &fill, sizeof fill);
      }
}

template <class T, int64_t Lanes>
void pack_gemm_lhs(const void* a, void* ap, int64_t m, int64_t k, int64_t width) {
  const auto* src = static_cast<const T*>(a);
  auto* dst = static_cast<T*>(ap);
  // Widths are powers of two below the lanes (Emitter::gemm_packing).
  if constexpr (Lanes > 8) if (width == 8) return pack_gemm_lhs<T, 8, Lanes>(src, dst, m, k);
  if constexpr (Lanes > 4) if (width == 4) return pack_gemm_lhs<T, 4, Lanes>(src, dst, m, k);
  if constexpr (Lanes > 2) if (width == 2) return pack_gemm_lhs<T, 2, Lanes>(src, dst, m, k);
  pack_gemm_lhs<T, 1, Lanes>(src, dst, m, k);
}

template <class T>
void pack_gemm_lhs(const void* a, void* ap, int64_t m, int64_t k, int64_t width, int64_t lanes) {
  switch (lanes) {
    case 2: return pack_gemm_lhs<T, 2>(a, ap, m, k, width);
    case 4: return pack_gemm_lhs<T, 4>(a, ap, m, k, width);
    case 8: return pack_gemm_lhs<T, 8>(a, ap, m, k, width);
    default: return pack_gemm_lhs<T, 16>(a, ap, m, k, width);  // 16: AVX-512's int32 lanes, the most
  }
}

}  // namespace

void* try_allocate_owned(CallState& st, int64_t bytes) {
  try {
    std::vector<detail::Storage*>& owned = st.owned();
    owned.reserve(owned.size() + 1);
    detail::Storage* s = detail::Storage::allocate(static_cast<size_t>(bytes));
    owned.push_back(s);
    return s->data;
  } catch (...) {
    return nullptr;
  }
}

}  // namespace ag::jit

using ag::jit::allocation_failure;
using ag::jit::CallState;
using ag::jit::JitArg;
using ag::jit::JitCallCtx;

extern "C" {

void* agc_rt_alloc(JitCallCtx* ctx, int64_t bytes) {
  CallState& st = ag::jit::state_of(ctx);
  void* p = ag::jit::try_allocate_owned(st, bytes);
  if (!p) st.error = allocation_failure(bytes);
  return p;
}

void agc_rt_free(JitCallCtx* ctx, void* p) {
  if (ag::detail::Storage* s = ag::jit::state_of(ctx).take_owned(p)) s->release();
}

void* agc_rt_output(JitCallCtx* ctx, int32_t index, int64_t elements) {
  CallState& st = ag::jit::state_of(ctx);
  const ag::jit::ResultPlan& r = st.program->results[static_cast<size_t>(index)];
  try {
    st.outputs[static_cast<size_t>(index)] = ag::detail::make_tensor(r.type.dtype, ag::Shape{elements});
  } catch (...) {
    st.error = allocation_failure(elements * static_cast<int64_t>(ag::dtype_size(r.type.dtype)));
    return nullptr;
  }
  return ag::detail::impl_of(st.outputs[static_cast<size_t>(index)])->data;
}

void agc_rt_out_of_memory(JitCallCtx* ctx, int32_t node, int32_t output, const int64_t* dims, int64_t block_bytes) {
  CallState& st = ag::jit::state_of(ctx);
  try {
    const ag::Node& n = *st.program->nodes[static_cast<size_t>(node)].node;
    const ag::TensorType& type = n.outputs[static_cast<size_t>(output)];
    const ag::Shape shape = dims ? ag::jit::shape_from(dims, type.shape.rank()) : type.shape;
    st.error = std::make_exception_ptr(
        ag::detail::out_of_memory(ag::detail::user_op_name(n.op), type.dtype, shape, n.loc, block_bytes));
  } catch (...) {
    st.error = std::current_exception();
  }
}

void agc_rt_fail(JitCallCtx* ctx, int32_t node, int32_t kind, int64_t a, int64_t b) {
  CallState& st = ag::jit::state_of(ctx);
  try {
    ag::jit::throw_failure(st.program->nodes[static_cast<size_t>(node)], static_cast<ag::jit::FailKind>(kind), a, b);
  } catch (...) {
    st.error = std::current_exception();
  }
}

void agc_rt_slot_copy(JitCallCtx* ctx, int32_t from, int32_t to, int32_t move) {
  auto& slots = ag::jit::state_of(ctx).slots();
  if (from == to) return;
  if (move) slots[static_cast<size_t>(to)] = std::move(slots[static_cast<size_t>(from)]);
  else slots[static_cast<size_t>(to)] = slots[static_cast<size_t>(from)];
}

void agc_rt_parallel_for(void (*worker)(void*, int64_t, int64_t), void* closure, int64_t n, int64_t grain, int64_t unit) {
  // The worker cannot fail (outlined loops have no error exits), and AG_NUM_THREADS was read
  // when the code was compiled: what can still throw is starting the pool's threads, which must
  // not unwind through compiled code. The loop then runs here, whole.
  try {
    ag::detail::parallel_for_measured(n, grain, worker, closure, unit);
  } catch (...) {
    worker(closure, 0, n);
  }
}

int32_t agc_rt_ipow_i32(int32_t base, int32_t exponent) { return ag::jit::wrapping_pow(base, exponent); }
int64_t agc_rt_ipow_i64(int64_t base, int64_t exponent) { return ag::jit::wrapping_pow(base, exponent); }

// Data movement, once per chain: compiled here rather than emitted, where its unrolled loads and
// shuffles cost the JIT more to optimize and generate than the kernel itself
// (docs/performance.md, "Measured decisions": packing compiled ahead).
void agc_rt_pack_gemm_lhs(const void* a, void* ap, int64_t m, int64_t k, int64_t width, int64_t lanes, int64_t elem_bytes) {
  if (elem_bytes == 4) ag::jit::pack_gemm_lhs<int32_t>(a, ap, m, k, width, lanes);
  else ag::jit::pack_gemm_lhs<int64_t>(a, ap, m, k, width, lanes);
}

// B packed once for the products after it (KernelSet::gemm_pack_b_*): in a buffer the call owns
// (freed with agc_rt_free, or when the call ends), or null when gemm would not read a packed B
// or the buffer cannot be had; the products then read B itself, so nothing fails here.
void* agc_rt_gemm_pack_b(JitCallCtx* ctx, int32_t float64, const void* b, int64_t m, int64_t k, int64_t n, int64_t transposes) {
  const ag::detail::KernelSet& ks = ag::detail::kernels();
  const int64_t bytes = float64 ? ks.gemm_packed_b_bytes_f64(m, k, n) : ks.gemm_packed_b_bytes_f32(m, k, n);
  void* packed = bytes > 0 ? ag::jit::try_allocate_owned(ag::jit::state_of(ctx), bytes) : nullptr;
  if (!packed) return nullptr;
  if (float64) ks.gemm_pack_b_f64(static_cast<const double*>(b), packed, m, k, n, transposes);
  else ks.gemm_pack_b_f32(static_cast<const float*>(b), packed, m, k, n, transposes);
  return packed;
}

}  // extern "C"
