# Builds and runs tests/e2e/package_consumer against agc found as a package: from the build
# tree (MODE=build-tree) or after `cmake --install` into a scratch prefix (MODE=installed).
# In build-tree mode it also checks ag_rewrite_sources' depfile: a rebuild with nothing changed
# does not re-run the rewrite, one after an included header changed does.
#   cmake -DMODE=... -DAGC_BUILD_DIR=... -DWORK_DIR=... -DCXX=... -P package_test.cmake
file(REMOVE_RECURSE ${WORK_DIR})
# A copy: the depfile check edits the consumer's header.
file(COPY ${CMAKE_CURRENT_LIST_DIR}/package_consumer DESTINATION ${WORK_DIR})
set(consumer ${WORK_DIR}/package_consumer)
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

if(MODE STREQUAL "build-tree")
  function(rebuild out_var)
    execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc OUTPUT_VARIABLE out
                    ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "rebuild failed\n${out}\n${err}")
    endif()
    set(${out_var} "${out}" PARENT_SCOPE)
  endfunction()
  rebuild(unchanged)
  if(unchanged MATCHES "ag-rewrite model.cpp")
    message(FATAL_ERROR "a rebuild with nothing changed re-ran the rewrite:\n${unchanged}")
  endif()
  # model.cpp itself is unchanged: only the depfile names model.h as an input of the rewrite.
  file(APPEND ${consumer}/model.h "inline constexpr int kUnusedByTheModel = 1;\n")
  rebuild(after_header_edit)
  if(NOT after_header_edit MATCHES "ag-rewrite model.cpp")
    message(FATAL_ERROR "editing model.h (included by the rewritten model.cpp) did not re-run the rewrite:\n"
                        "${after_header_edit}")
  endif()
  message(STATUS "the depfile re-runs the rewrite after a header edit, and only then")
endif()
