# Warning flags and sanitizer options shared by every agc target.
add_library(agc_warnings INTERFACE)
target_compile_options(agc_warnings INTERFACE -Wall -Wextra)
if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  # clang 19's -march=native on CPUs with AVX10 (Sapphire Rapids and later) names +avx10.1-256
  # and then warns, once per file, that it promotes it to avx10.1-512: noise about the
  # compiler's own feature list (native kernels, samples, benchmarks), not about our code.
  target_compile_options(agc_warnings INTERFACE -Wno-invalid-feature-combination)
endif()
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # g++ 12 at -O3 warns inside libstdc++'s own std::string operator+ (GCC PR 105329: a false
  # -Wrestrict about impossible sizes); the warning cannot be acted on in our code.
  target_compile_options(agc_warnings INTERFACE -Wno-restrict)
endif()

if(AG_SANITIZE)
  # Applied globally so that every test and sample runs instrumented.
  # Signed overflow is defined here (-fwrapv: integer tensors wrap, eagerly and in JIT code), so
  # UBSan's overflow check would only flag intended behaviour.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize=signed-integer-overflow -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# Release builds keep frame pointers: cheap, and it makes perf and crash reports readable.
add_compile_options(-fno-omit-frame-pointer)
