# Builds and runs tests/e2e/package_consumer against agc found as a package: from the build
# tree (MODE=build-tree) or after `cmake --install` into a scratch prefix (MODE=installed).
#   cmake -DMODE=... -DAGC_BUILD_DIR=... -DWORK_DIR=... -DCXX=... -P package_test.cmake
set(consumer ${CMAKE_CURRENT_LIST_DIR}/package_consumer)
file(REMOVE_RECURSE ${WORK_DIR})
if(MODE STREQUAL "installed")
  execute_process(COMMAND ${CMAKE_COMMAND} --install ${AGC_BUILD_DIR} --prefix ${WORK_DIR}/prefix
                  RESULT_VARIABLE rc OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "cmake --install failed")
  endif()
  set(find_args -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
else()
  set(find_args -Dagc_DIR=${AGC_BUILD_DIR})
endif()
foreach(step
    "${CMAKE_COMMAND};-S;${consumer};-B;${WORK_DIR}/build;-G;Ninja;-DCMAKE_CXX_COMPILER=${CXX};${find_args}"
    "${CMAKE_COMMAND};--build;${WORK_DIR}/build"
    "${WORK_DIR}/build/consumer")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${step}\n${out}\n${err}")
  endif()
endforeach()
message(STATUS "${out}")
if(MODE STREQUAL "installed")
  # The installed tool runs from the prefix, not from agc's build tree.
  file(READ ${WORK_DIR}/build/build.ninja ninja)
  # A substring search, not a regex: the path may hold regex characters (build-g++).
  string(FIND "${ninja}" "${WORK_DIR}/prefix/bin/ag-rewrite" used_installed_tool)
  if(used_installed_tool EQUAL -1)
    message(FATAL_ERROR "the consumer did not use the installed ag-rewrite")
  endif()
endif()
