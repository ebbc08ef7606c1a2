# ag_add_aot_library(<name> SAVED_MODEL <dir> [CPUS <level>...] [DEPENDS <file or target>...])
#
# A static library <name> holding a saved model's signatures compiled ahead of time (ag-aot;
# docs/deploying.md): link it, `#include "<name>.h"`, and call `<name>::<signature>(x)`. The
# program needs no LLVM (the library links agc::jit_core and agc::runtime only), and the first
# call runs machine code at once. CPUS: the levels to compile for, widest first (default
# x86-64-v3 and x86-64-v2); each process runs the widest its CPU has. SAVED_MODEL may be made
# during the build: name what makes it in DEPENDS (or let its saved_model.txt be a custom
# command's OUTPUT in the same directory).
function(ag_add_aot_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "SAVED_MODEL" "CPUS;DEPENDS")
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "ag_add_aot_library: '${name}' is the generated code's C++ namespace: [A-Za-z_][A-Za-z0-9_]*")
  endif()
  if(NOT arg_SAVED_MODEL)
    message(FATAL_ERROR "ag_add_aot_library(${name}): SAVED_MODEL <dir> is required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ag_add_aot_library(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(TARGET ag-aot)  # agc's own build tree
    set(tool ag-aot)
    set(core ag_jit_core)
  elseif(TARGET agc::ag-aot)
    set(tool agc::ag-aot)
    set(core agc::jit_core)
  else()
    message(FATAL_ERROR "ag_add_aot_library: no ag-aot executable (find_package(agc CONFIG) first)")
  endif()
  get_filename_component(model "${arg_SAVED_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  set(out "${CMAKE_CURRENT_BINARY_DIR}/ag_aot/${name}")
  set(cpu_args "")
  foreach(cpu IN LISTS arg_CPUS)
    list(APPEND cpu_args --cpu ${cpu})
  endforeach()
  add_custom_command(
    OUTPUT "${out}/${name}.h" "${out}/${name}.cpp" "${out}/lib${name}_code.a"
    COMMAND ${tool} "${model}" --name ${name} --out "${out}" ${cpu_args}
    DEPENDS ${tool} "${model}/saved_model.txt" ${arg_DEPENDS}
    COMMENT "ag-aot ${name}"
    VERBATIM)
  add_library(${name} STATIC "${out}/${name}.cpp" "${out}/${name}.h")
  target_include_directories(${name} PUBLIC "$<BUILD_INTERFACE:${out}>")
  # The code's archive after the library whose entry table names its symbols, then the runtime,
  # and what the code calls besides agc: libm, and glibc's vector math (the loop vectorizer's
  # _ZGV* functions).
  target_link_libraries(${name} PUBLIC "${out}/lib${name}_code.a" ${core} m mvec)
endfunction()
