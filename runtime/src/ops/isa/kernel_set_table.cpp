// The KernelSet of one instruction-set level: compiled once per level, like the kernels it
// points to. AG_KERNEL_TABLE (its symbol, the only global one of the level's object) and
// AG_KERNEL_ISA_NAME come from runtime/CMakeLists.txt. Only data here: nothing runs before
// kernel_select.cpp has checked that the CPU can run this level.
#include "ag/detail/kernel_set.h"
#include "isa_kernels.h"

namespace {

using namespace ag::detail;

// What -march let the compiler use, from its predefined macros.
constexpr uint64_t kCompiledFeatures = 0
#ifdef __SSE3__
                                       | kCpuSse3
#endif
#ifdef __SSSE3__
                                       | kCpuSsse3
#endif
#ifdef __SSE4_1__
                                       | kCpuSse41
#endif
#ifdef __SSE4_2__
                                       | kCpuSse42
#endif
#ifdef __POPCNT__
                                       | kCpuPopcnt
#endif
#ifdef __AVX__
                                       | kCpuAvx
#endif
#ifdef __AVX2__
                                       | kCpuAvx2
#endif
#ifdef __FMA__
                                       | kCpuFma
#endif
#ifdef __BMI__
                                       | kCpuBmi
#endif
#ifdef __BMI2__
                                       | kCpuBmi2
#endif
#ifdef __F16C__
                                       | kCpuF16c
#endif
#ifdef __LZCNT__
                                       | kCpuLzcnt
#endif
#ifdef __MOVBE__
                                       | kCpuMovbe
#endif
#ifdef __AVX512F__
                                       | kCpuAvx512f
#endif
#ifdef __AVX512BW__
                                       | kCpuAvx512bw
#endif
#ifdef __AVX512DQ__
                                       | kCpuAvx512dq
#endif
#ifdef __AVX512VL__
                                       | kCpuAvx512vl
#endif
#ifdef __AVX512CD__
                                       | kCpuAvx512cd
#endif
#ifdef __AVX512VBMI__
                                       | kCpuAvx512vbmi
#endif
#ifdef __AVX512VBMI2__
                                       | kCpuAvx512vbmi2
#endif
#ifdef __AVX512VNNI__
                                       | kCpuAvx512vnni
#endif
#ifdef __AVX512BF16__
                                       | kCpuAvx512bf16
#endif
#ifdef __AVX512IFMA__
                                       | kCpuAvx512ifma
#endif
#ifdef __AVX512VPOPCNTDQ__
                                       | kCpuAvx512vpopcntdq
#endif
#ifdef __AVX512BITALG__
                                       | kCpuAvx512bitalg
#endif
#ifdef __AVX512FP16__
                                       | kCpuAvx512fp16
#endif
#ifdef __GFNI__
                                       | kCpuGfni
#endif
#ifdef __VAES__
                                       | kCpuVaes
#endif
#ifdef __VPCLMULQDQ__
                                       | kCpuVpclmulqdq
#endif
#ifdef __AVXVNNI__
                                       | kCpuAvxvnni
#endif
    ;

namespace k = ag::detail::AG_KERNEL_NS;

}  // namespace

extern "C" const KernelSet AG_KERNEL_TABLE = {
    AG_KERNEL_ISA_NAME, kCompiledFeatures, &k::elementwise_kernel, &k::reduce_kernel, &k::matmul_kernel,
    &k::gemm<float>,    &k::gemm<double>,  &k::gemm<int32_t>,      &k::gemm<int64_t>,
    &k::random_fill,    &k::conv_epilogue<float>, &k::conv_epilogue<double>,
    &k::gemm_packed_b_bytes<float>, &k::gemm_packed_b_bytes<double>, &k::gemm_pack_b<float>, &k::gemm_pack_b<double>,
    &k::gemm_packed_b<float>, &k::gemm_packed_b<double>,
};
