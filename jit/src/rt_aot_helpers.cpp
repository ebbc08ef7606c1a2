// The runtime helpers that the JIT binds to addresses chosen at run time (rt_helpers.def: the GEMM
// of the process's kernel set) as functions with those names, for code that a static linker links
// (code compiled ahead of time, aot.cpp). The JIT never calls these: its symbols come first.
#include <cstdint>

#include "ag/detail/kernel_set.h"

extern "C" {
void agc_rt_gemm_f32(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t transposes) {
  ag::detail::kernels().gemm_f32(a, b, c, m, k, n, transposes);
}
void agc_rt_gemm_f64(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n, int64_t transposes) {
  ag::detail::kernels().gemm_f64(a, b, c, m, k, n, transposes);
}
void agc_rt_gemm_i32(const int32_t* a, const int32_t* b, int32_t* c, int64_t m, int64_t k, int64_t n, int64_t transposes) {
  ag::detail::kernels().gemm_i32(a, b, c, m, k, n, transposes);
}
void agc_rt_gemm_packed_b_f32(const float* a, const float* b, const void* packed, float* c, int64_t m, int64_t k, int64_t n,
                              int64_t transposes) {
  ag::detail::kernels().gemm_packed_b_f32(a, b, packed, c, m, k, n, transposes);
}
void agc_rt_gemm_packed_b_f64(const double* a, const double* b, const void* packed, double* c, int64_t m, int64_t k,
                              int64_t n, int64_t transposes) {
  ag::detail::kernels().gemm_packed_b_f64(a, b, packed, c, m, k, n, transposes);
}
void agc_rt_gemm_i64(const int64_t* a, const int64_t* b, int64_t* c, int64_t m, int64_t k, int64_t n, int64_t transposes) {
  ag::detail::kernels().gemm_i64(a, b, c, m, k, n, transposes);
}
}
