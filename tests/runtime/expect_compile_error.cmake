# A compile-time rule is a test too: FILE must fail to compile, and the compiler's messages must
# contain EXPECT (a static_assert's text).
#   cmake -DCXX=... -DFILE=... -DFLAGS=... -DEXPECT=... -P expect_compile_error.cmake
separate_arguments(flags NATIVE_COMMAND "${FLAGS}")
execute_process(COMMAND ${CXX} -fsyntax-only -std=c++20 ${flags} ${FILE}
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "${FILE} (${FLAGS}) compiled, but must be rejected with: ${EXPECT}")
endif()
string(FIND "${err}${out}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${FILE} (${FLAGS}) was rejected without the expected message \"${EXPECT}\":\n${err}${out}")
endif()
