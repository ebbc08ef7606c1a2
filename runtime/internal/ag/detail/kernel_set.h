// The eager kernels whose code depends on the SIMD instruction set (elementwise math,
// reductions, GEMM) are built once per x86-64 level (AG_KERNEL_ISAS in runtime/CMakeLists.txt:
// x86-64-v2, x86-64-v3, x86-64-v4, and native for a build tuned to its machine) and chosen
// when first used: the widest level this CPU supports, or the one AG_KERNEL_ISA names. So one
// build runs on any x86-64 CPU, and the tests run every level on any machine that has it.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "ag/graph/graph.h"
#include "ag/tensor.h"

namespace ag::detail {

// CPU features a kernel set may have been compiled to use (its `cpu_features` bits).
enum CpuFeature : uint64_t {
  kCpuSse3 = 1u << 0,
  kCpuSsse3 = 1u << 1,
  kCpuSse41 = 1u << 2,
  kCpuSse42 = 1u << 3,
  kCpuPopcnt = 1u << 4,
  kCpuAvx = 1u << 5,
  kCpuAvx2 = 1u << 6,
  kCpuFma = 1u << 7,
  kCpuBmi = 1u << 8,
  kCpuBmi2 = 1u << 9,
  kCpuF16c = 1u << 10,
  kCpuLzcnt = 1u << 11,
  kCpuMovbe = 1u << 12,
  kCpuAvx512f = 1u << 13,
  kCpuAvx512bw = 1u << 14,
  kCpuAvx512dq = 1u << 15,
  kCpuAvx512vl = 1u << 16,
  kCpuAvx512cd = 1u << 17,
  kCpuAvx512vbmi = 1u << 18,
  kCpuAvx512vbmi2 = 1u << 19,
  kCpuAvx512vnni = 1u << 20,
  kCpuAvx512bf16 = 1u << 21,
  kCpuAvx512ifma = 1u << 22,
  kCpuAvx512vpopcntdq = 1u << 23,
  kCpuAvx512bitalg = 1u << 24,
  kCpuAvx512fp16 = 1u << 25,
  kCpuGfni = 1u << 26,
  kCpuVaes = 1u << 27,
  kCpuVpclmulqdq = 1u << 28,
  kCpuAvxvnni = 1u << 29,
};

struct KernelSet {
  const char* isa;        // "x86-64-v2", "x86-64-v3", "x86-64-v4" or "native"
  uint64_t cpu_features;  // CpuFeature bits the compiler was allowed to use
  Tensor (*elementwise)(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
  Tensor (*reduce)(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
  Tensor (*matmul)(std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc);
  // Row-major C[m, n] = op(A) op(B), op(A) [m, k] and op(B) [k, n], where `transposes` bit 0
  // stores A as [k, m] and bit 1 B as [n, k] (never copied: Eigen packs either layout): the
  // eager matmul's GEMM, also bound into JIT code.
  void (*gemm_f32)(const float* a, const float* b, float* c, int64_t m, int64_t k, int64_t n, int64_t transposes);
  void (*gemm_f64)(const double* a, const double* b, double* c, int64_t m, int64_t k, int64_t n, int64_t transposes);
  void (*gemm_i32)(const int32_t* a, const int32_t* b, int32_t* c, int64_t m, int64_t k, int64_t n, int64_t transposes);
  void (*gemm_i64)(const int64_t* a, const int64_t* b, int64_t* c, int64_t m, int64_t k, int64_t n, int64_t transposes);
  // Fills `n` elements of `dtype` at `out` with words counter.. of the random stream of `seed`:
  // uniform in [a, b), or (normal) normal with mean a and stddev b, two words per element
  // (ops/isa/random.cpp; bit-identical at every level).
  void (*random_fill)(DType dtype, void* out, int64_t n, bool normal, uint64_t seed, uint64_t counter, double a,
                      double b);
  // FusedConv2D's epilogue in place on y [rows, oc]: + bias (unless null), then relu (when
  // asked) (ops/isa/conv_epilogue.cpp).
  void (*conv_epilogue_f32)(float* y, const float* bias, bool relu, int64_t rows, int64_t oc);
  void (*conv_epilogue_f64)(double* y, const double* bias, bool relu, int64_t rows, int64_t oc);
  // The GEMM with B packed once for many products of the same shapes (ops/isa/matmul_packed.cpp;
  // compiled code packs a weight that stays the same through a staged loop before the loop).
  // gemm_packed_b_bytes: the bytes of B's packed form for the product gemm(a, b, c, m, k, n, _),
  // 0 when gemm would not pack B (a matrix-vector or small product, or one in row blocks);
  // gemm_pack_b packs it there; gemm_packed_b is gemm with B read from `packed` (B itself when
  // `packed` is null or was packed for other shapes): the same bits as gemm.
  int64_t (*gemm_packed_b_bytes_f32)(int64_t m, int64_t k, int64_t n);
  int64_t (*gemm_packed_b_bytes_f64)(int64_t m, int64_t k, int64_t n);
  void (*gemm_pack_b_f32)(const float* b, void* packed, int64_t m, int64_t k, int64_t n, int64_t transposes);
  void (*gemm_pack_b_f64)(const double* b, void* packed, int64_t m, int64_t k, int64_t n, int64_t transposes);
  void (*gemm_packed_b_f32)(const float* a, const float* b, const void* packed, float* c, int64_t m, int64_t k, int64_t n,
                            int64_t transposes);
  void (*gemm_packed_b_f64)(const double* a, const double* b, const void* packed, double* c, int64_t m, int64_t k,
                            int64_t n, int64_t transposes);
};

// The kernel set of this process, chosen on first use: the one AG_KERNEL_ISA names (an
// ag::Error when it was not built or this CPU lacks a feature it needs), else the widest one
// this CPU supports.
const KernelSet& kernels();
// Products that read a packed B (KernelSet::gemm_packed_b_*) since the process started: tests
// check that the packed path ran, not a fallback to gemm.
int64_t gemm_packed_b_products();
void count_gemm_packed_b_product();
// Every kernel set this build contains, narrowest first.
std::span<const KernelSet* const> built_kernel_sets();
// The features `set` needs that this CPU lacks, comma-separated ("" when it can run).
std::string missing_cpu_features(const KernelSet& set);

}  // namespace ag::detail
