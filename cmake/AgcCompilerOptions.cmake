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

if(AG_TSAN)
  # Every target instrumented, as with AG_SANITIZE; code the JIT generates is not (its races are
  # out of TSan's sight), nor are libLLVM and libclang-cpp (their mutexes are still seen through
  # the intercepted pthread calls).
  # The shared TSan runtime (with an rpath to it): a test that replaces the global operator new
  # (function_call_allocations_test.cpp) then links, as it does with the static ASan runtime.
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} -fsanitize=thread -print-file-name=libclang_rt.tsan-x86_64.so
                  OUTPUT_VARIABLE tsan_runtime OUTPUT_STRIP_TRAILING_WHITESPACE)
  get_filename_component(AG_TSAN_RUNTIME_DIR "${tsan_runtime}" DIRECTORY)
  set(AG_TSAN_LINK_OPTIONS -fsanitize=thread -shared-libsan "-Wl,-rpath,${AG_TSAN_RUNTIME_DIR}")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(${AG_TSAN_LINK_OPTIONS})
endif()

if(AG_FUZZ)
  # Coverage feedback and ASan for the rewriter's code (the libFuzzer runtime is linked into the
  # fuzzer target only); build-fuzz/ holds this configuration.
  add_compile_options(-fsanitize=fuzzer-no-link,address)
  add_link_options(-fsanitize=address)
endif()

# Release builds keep frame pointers: cheap, and it makes perf and crash reports readable.
add_compile_options(-fno-omit-frame-pointer)
