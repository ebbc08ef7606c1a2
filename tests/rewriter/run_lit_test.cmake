# A small lit: runs the `// RUN:` lines of one test file with bash (pipefail), each of which must succeed.
# Substitutions: %s (the test file), %t (a temporary path for it), %flags (compiler flags
# that find agc's headers), %cxx (clang++-19), %gxx (g++), and the tools ag-rewrite, ag-emit,
# ag-opt, FileCheck and not.
#   cmake -DTEST_FILE=... -DTEMP_DIR=... -DAG_REWRITE=... -DFILECHECK=... -DNOT=... \
#         -DFLAGS=... -DCXX=... -DGXX=... -P run_lit_test.cmake
file(STRINGS "${TEST_FILE}" run_lines REGEX "^// RUN: ")
if(NOT run_lines)
  message(FATAL_ERROR "${TEST_FILE} has no RUN lines")
endif()
get_filename_component(name "${TEST_FILE}" NAME_WE)
file(MAKE_DIRECTORY "${TEMP_DIR}")
foreach(line IN LISTS run_lines)
  string(REGEX REPLACE "^// RUN: " "" cmd "${line}")
  string(REPLACE "%flags" "${FLAGS}" cmd "${cmd}")
  string(REPLACE "%cxx" "${CXX}" cmd "${cmd}")
  string(REPLACE "%gxx" "${GXX}" cmd "${cmd}")
  string(REPLACE "%s" "${TEST_FILE}" cmd "${cmd}")
  string(REPLACE "%t" "${TEMP_DIR}/${name}.tmp" cmd "${cmd}")
  string(REGEX REPLACE "(^|[|;&] *|not +)ag-rewrite " "\\1${AG_REWRITE} " cmd "${cmd}")
  if(AG_EMIT)
    string(REGEX REPLACE "(^|[|;&] *|not +|[A-Z_]+=[^ ]+ +)ag-emit " "\\1${AG_EMIT} " cmd "${cmd}")
  endif()
  if(AG_OPT)
    string(REGEX REPLACE "(^|[|;&] *|not +|[A-Z_]+=[^ ]+ +)ag-opt " "\\1${AG_OPT} " cmd "${cmd}")
  endif()
  string(REGEX REPLACE "(^|[|;&] *)not " "\\1${NOT} " cmd "${cmd}")
  string(REGEX REPLACE "\\| *FileCheck " "| ${FILECHECK} " cmd "${cmd}")
  execute_process(COMMAND bash -c "set -o pipefail; ${cmd}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "RUN failed (${rc}): ${cmd}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
  endif()
endforeach()
