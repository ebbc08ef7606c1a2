# What a user gets: agc found as a package, from this build tree (MODE=build-tree) or after
# `cmake --install` into a prefix inside the build tree (MODE=installed).
#  1. The project of docs/using-agc-in-your-project.md, its files taken from the page itself
#     (extract_doc_files.awk), built and run exactly as the page says: its Function must run as
#     machine code (the program's own report, and the AG_LOG=compile line of the compile).
#     (installed) The installed ag-emit prints the optimized IR of the page's function.
#  2. A project that links agc::runtime only (package_runtime_only/): it checks for itself that
#     Functions run on the interpreter with one warning, and that jit_compile = true is an error.
#  3. A project using the opt-in interop headers (package_interop/): ag/eigen.h and ag/dlpack.h
#     are shipped, and build and run with Eigen and DLPack found by the project.
#  4. A C++17 project with a target named `opt` (package_cxx17/): configures without a word about
#     packages it never asked for (agc imports no LLVM CMake package), rewrites and runs compiled.
#  5. (installed) A program built without CMake: c++ main.cpp $(pkg-config --cflags --libs agc)
#     (package_pkgconfig/) runs its Function as machine code.
#  6. A project that deploys (package_aot/): a model saved during its build, compiled by
#     ag_add_aot_library, run by an application that loads no LLVM.
#  7. (agc built with MPI) A project linking agc::distribute (package_distribute/): one process
#     alone, two under mpirun.
#  8. (build-tree) ag_rewrite_sources' depfile: a rebuild with nothing changed does not re-run the
#     rewrite, one after an included header changed does.
#   cmake -DMODE=... -DAGC_BUILD_DIR=... -DWORK_DIR=... -DCXX=... -DDOC=... -P package_test.cmake
cmake_policy(VERSION 3.25)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/consumer)

function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}\n${err}")
  endif()
  set(step_output "${out}${err}" PARENT_SCOPE)
endfunction()

# Configures and builds the consumer project `dir` (of this directory) into ${WORK_DIR}/<dir>,
# runs its program `exe` and requires its output to match `expected`. configure_output: what
# configuring printed.
function(build_and_run_consumer dir exe expected)
  run_step(${CMAKE_COMMAND} -S ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${dir} -B ${WORK_DIR}/${dir} -G Ninja
           -DCMAKE_CXX_COMPILER=${CXX} ${find_args})
  set(configure_output "${step_output}" PARENT_SCOPE)
  run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/${dir})
  run_step(${CMAKE_COMMAND} -E env AG_CACHE_DIR=off ${WORK_DIR}/${dir}/${exe})
  message(STATUS "${step_output}")
  if(NOT step_output MATCHES "${expected}")
    message(FATAL_ERROR "the consumer ${dir} printed (expected /${expected}/):\n${step_output}")
  endif()
endfunction()

# The consumer's files, as the page spells them out.
run_step(awk -v dir=${WORK_DIR}/consumer -f ${CMAKE_CURRENT_LIST_DIR}/extract_doc_files.awk ${DOC})
string(REPLACE "\n" ";" extracted "${step_output}")
foreach(expected CMakeLists.txt model.h model.cpp main.cpp)
  list(FIND extracted ${expected} found)
  if(found EQUAL -1)
    message(FATAL_ERROR "${DOC} no longer spells out ${expected} (found: ${extracted})")
  endif()
endforeach()

if(MODE STREQUAL "installed")
  run_step(${CMAKE_COMMAND} --install ${AGC_BUILD_DIR} --prefix ${WORK_DIR}/prefix)
  set(find_args -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
  # Only public headers are installed.
  foreach(private ops_internal.h variable_state.h memory_stats.h log.h tensor_buffer.h kernel_set.h)
    if(EXISTS ${WORK_DIR}/prefix/include/ag/detail/${private})
      message(FATAL_ERROR "the internal header ag/detail/${private} was installed")
    endif()
  endforeach()
else()
  set(find_args -Dagc_DIR=${AGC_BUILD_DIR})
endif()

# 1. The documented project: configured, built and run as the page says.
run_step(${CMAKE_COMMAND} -S ${WORK_DIR}/consumer -B ${WORK_DIR}/build -G Ninja -DCMAKE_CXX_COMPILER=${CXX} ${find_args})
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step(${CMAKE_COMMAND} -E env AG_CACHE_DIR=off AG_LOG=compile ${WORK_DIR}/build/my_app)
message(STATUS "${step_output}")
foreach(expected
    "grow\\(1\\) = 5162 traced, 5162 eagerly"
    "JIT linked: yes \\(code for [a-z0-9-]+\\), compiles: 1, disk-cache hits: 0"
    "d/dx x\\^3 at 2 = 12\n"
    "agc: compile: grow\\(x: [^\n]* with jit")
  if(NOT step_output MATCHES "${expected}")
    message(FATAL_ERROR "the documented project did not print /${expected}/:\n${step_output}")
  endif()
endforeach()
if(MODE STREQUAL "installed")
  # The installed tool runs from the prefix, not from agc's build tree.
  file(READ ${WORK_DIR}/build/build.ninja ninja)
  # A substring search, not a regex: the path may hold regex characters (build-g++).
  string(FIND "${ninja}" "${WORK_DIR}/prefix/bin/ag-rewrite" used_installed_tool)
  if(used_installed_tool EQUAL -1)
    message(FATAL_ERROR "the consumer did not use the installed ag-rewrite")
  endif()
  # The installed developer's driver finds the installed package and prints the IR of the
  # documented function (its model.h comes from beside model.cpp).
  run_step(${CMAKE_COMMAND} -E env AG_EMIT_DIR=${WORK_DIR}/emit CXX=${CXX}
           ${WORK_DIR}/prefix/bin/ag-emit ${WORK_DIR}/consumer/model.cpp grow int32[] --emit=ir-opt)
  if(NOT step_output MATCHES "define [^\n]*@agc_entry")
    message(FATAL_ERROR "the installed ag-emit printed no IR:\n${step_output}")
  endif()
endif()

# 2. agc::runtime alone (the program checks itself and exits 0 only when all held).
build_and_run_consumer(package_runtime_only runtime_only "\nOK\n")
file(READ ${WORK_DIR}/package_runtime_only/build.ninja ninja)
string(FIND "${ninja}" "libLLVM" links_llvm)
if(NOT links_llvm EQUAL -1)
  message(FATAL_ERROR "a program linking only agc::runtime links libLLVM")
endif()

# 3. The interop headers.
build_and_run_consumer(package_interop interop_consumer "interop consumer: sum 20, zero-copy round trip: true")

# 4. C++17, a target named `opt`, a quiet configure.
build_and_run_consumer(package_cxx17 opt "collatz\\(27\\) = 111 traced, 111 eagerly, compiled: yes")
foreach(noise "Could NOT find" "CMake Warning" "LLVM")
  string(FIND "${configure_output}" "${noise}" found)
  if(NOT found EQUAL -1)
    message(FATAL_ERROR "configuring a consumer printed '${noise}':\n${configure_output}")
  endif()
endforeach()

# 5. pkg-config, no CMake.
if(MODE STREQUAL "installed")
  find_program(PKG_CONFIG pkg-config REQUIRED)
  run_step(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${WORK_DIR}/prefix/lib/pkgconfig
           ${PKG_CONFIG} --cflags --libs agc)
  string(STRIP "${step_output}" pc_flags)
  separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
  file(MAKE_DIRECTORY ${WORK_DIR}/pkgconfig)
  run_step(${CXX} ${CMAKE_CURRENT_LIST_DIR}/package_pkgconfig/main.cpp -o ${WORK_DIR}/pkgconfig/app ${pc_flags})
  run_step(${CMAKE_COMMAND} -E env AG_CACHE_DIR=off ${WORK_DIR}/pkgconfig/app)
  message(STATUS "${step_output}")
  if(NOT step_output MATCHES "sum 14, JIT linked: yes, compiles: 1")
    message(FATAL_ERROR "the pkg-config consumer printed:\n${step_output}")
  endif()
endif()

# 6. Ahead-of-time compilation.
build_and_run_consumer(package_aot app "aot consumer: .*, level x86-64-v2, libLLVM loaded: no")
run_step(ldd ${WORK_DIR}/package_aot/app)
if(step_output MATCHES "libLLVM")
  message(FATAL_ERROR "the AOT consumer links libLLVM:\n${step_output}")
endif()

# 7. agc::distribute (when agc was built with MPI): one process alone, two under mpirun.
if(MPIEXEC)
  build_and_run_consumer(package_distribute distribute_consumer "distribute consumer: 1 process\\(es\\), sum 1, compiles: 1")
  run_step(${CMAKE_COMMAND} -E env AG_CACHE_DIR=off ${MPIEXEC} --allow-run-as-root --oversubscribe -np 2
           ${WORK_DIR}/package_distribute/distribute_consumer)
  if(NOT step_output MATCHES "distribute consumer: 2 process\\(es\\), sum 3, compiles: 1")
    message(FATAL_ERROR "the distribute consumer under mpirun printed:\n${step_output}")
  endif()
endif()

# 8. The depfile.
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
  file(APPEND ${WORK_DIR}/consumer/model.h "inline constexpr int kUnusedByTheModel = 1;\n")
  rebuild(after_header_edit)
  if(NOT after_header_edit MATCHES "ag-rewrite model.cpp")
    message(FATAL_ERROR "editing model.h (included by the rewritten model.cpp) did not re-run the rewrite:\n"
                        "${after_header_edit}")
  endif()
  message(STATUS "the depfile re-runs the rewrite after a header edit, and only then")
endif()
