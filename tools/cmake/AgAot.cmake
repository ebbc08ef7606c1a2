# ag_add_aot_library(<name> SAVED_MODEL <dir> [CPUS <level>...] [DEPENDS <file or target>...])
# ag_add_aot_library(<name> SOURCES <files...> HEADERS <headers...> FUNCTIONS "<fn>(<spec>, ...)"...
#                    [LINK_LIBRARIES <libs...>] [CPUS <level>...])
#
# A static library <name> holding a saved model's signatures compiled ahead of time (ag-aot;
# docs/deploying.md): link it, `#include "<name>.h"`, and call `<name>::<signature>(x)`. The
# program needs no LLVM (the library links agc::jit_core and agc::runtime only), and the first
# call runs machine code at once. CPUS: the levels to compile for, widest first (default
# x86-64-v3 and x86-64-v2); each process runs the widest its CPU has. SAVED_MODEL may be made
# during the build: name what makes it in DEPENDS (or let its saved_model.txt be a custom
# command's OUTPUT in the same directory).
#
# The second form traces the functions itself: SOURCES (rewritten with ag_rewrite_sources) and a
# generated main that includes HEADERS, which declare the FUNCTIONS, are built into
# <name>_aot_saver, which the build runs to save one concrete function per FUNCTIONS entry -- a
# free function and its tensor parameters' specs, `predict(float32[-1,784])`, `step(float32[],
# int32[4,4])` (-1: a dim of any size) -- into <build>/ag_aot/<name>/saved_model; then as above.
# LINK_LIBRARIES: what SOURCES need besides agc.
function(ag_add_aot_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "SAVED_MODEL" "CPUS;DEPENDS;SOURCES;HEADERS;FUNCTIONS;LINK_LIBRARIES")
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "ag_add_aot_library: '${name}' is the generated code's C++ namespace: [A-Za-z_][A-Za-z0-9_]*")
  endif()
  if(arg_SAVED_MODEL AND (arg_SOURCES OR arg_FUNCTIONS))
    message(FATAL_ERROR "ag_add_aot_library(${name}): give SAVED_MODEL, or SOURCES and FUNCTIONS, not both")
  endif()
  if(NOT arg_SAVED_MODEL AND NOT (arg_SOURCES AND arg_FUNCTIONS AND arg_HEADERS))
    message(FATAL_ERROR "ag_add_aot_library(${name}): SAVED_MODEL <dir>, or SOURCES, HEADERS and FUNCTIONS, are required")
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
  set(out "${CMAKE_CURRENT_BINARY_DIR}/ag_aot/${name}")
  if(arg_SAVED_MODEL)
    get_filename_component(model "${arg_SAVED_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  else()
    set(model "${out}/saved_model")
    _ag_aot_saver(${name} "${out}" "${model}")
    list(APPEND arg_DEPENDS ${name}_aot_saver)
  endif()
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

# The saver of the SOURCES form: a main that traces each FUNCTIONS entry and saves them all.
function(_ag_aot_saver name out model)
  set(calls "")
  foreach(entry IN LISTS arg_FUNCTIONS)
    string(STRIP "${entry}" entry)
    if(NOT entry MATCHES "^([A-Za-z_][A-Za-z0-9_:]*)\\((.*)\\)$")
      message(FATAL_ERROR "ag_add_aot_library(${name}): FUNCTIONS \"${entry}\" is not <function>(<spec>, ...), "
                          "a spec being <dtype>[<dims>] such as float32[-1,784]")
    endif()
    set(fn "${CMAKE_MATCH_1}")
    set(rest "${CMAKE_MATCH_2}")
    string(REGEX REPLACE "^.*::" "" signature "${fn}")
    set(specs "")
    while(rest MATCHES "^[ ,]*([a-z0-9]+)\\[([-0-9, ]*)\\](.*)$")
      set(dtype "${CMAKE_MATCH_1}")
      set(dims "${CMAKE_MATCH_2}")
      set(rest "${CMAKE_MATCH_3}")
      string(REPLACE " " "" dims "${dims}")
      string(REPLACE "," ", " dims "${dims}")
      list(APPEND specs "ag::TensorSpec({${dims}}, ag::${dtype})")
    endwhile()
    string(STRIP "${rest}" rest)
    if(NOT rest STREQUAL "")
      message(FATAL_ERROR "ag_add_aot_library(${name}): FUNCTIONS \"${entry}\": cannot read \"${rest}\" as a spec "
                          "(<dtype>[<dims>], such as float32[-1,784] or int32[])")
    endif()
    list(JOIN specs ", " specs)
    string(APPEND calls "      {\"${signature}\", ag::function(${fn}, {.name = \"${signature}\"}).get_concrete_function(${specs})},\n")
  endforeach()
  set(includes "")
  foreach(header IN LISTS arg_HEADERS)
    get_filename_component(header "${header}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    string(APPEND includes "#include \"${header}\"\n")
  endforeach()
  file(CONFIGURE OUTPUT "${out}/saver_main.cpp" CONTENT "// Generated by ag_add_aot_library(${name}): traces and saves its FUNCTIONS.
#include <ag/ag.h>
#include <ag/saved_model.h>

#include <cstdio>

${includes}
int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, \"usage: ${name}_aot_saver <dir>\\n\");
    return 2;
  }
  try {
    ag::saved_model::save(argv[1], {
${calls}    });
  } catch (const ag::Error& e) {
    std::fprintf(stderr, \"${name}_aot_saver: %s\\n\", e.what());
    return 1;
  }
  return 0;
}
" @ONLY)
  # agc::agc, as a program that traces links it (with agc::runtime alone, tracing would warn that
  # no JIT is linked; the saver compiles nothing).
  if(TARGET ag-aot)
    set(agc_lib agc)  # agc's own build tree
  else()
    set(agc_lib agc::agc)
  endif()
  add_executable(${name}_aot_saver "${out}/saver_main.cpp" ${arg_SOURCES})
  target_link_libraries(${name}_aot_saver PRIVATE ${agc_lib} ${arg_LINK_LIBRARIES})
  ag_rewrite_sources(${name}_aot_saver ${arg_SOURCES})
  add_custom_command(OUTPUT "${model}/saved_model.txt"
    COMMAND ${name}_aot_saver "${model}"
    DEPENDS ${name}_aot_saver
    COMMENT "Tracing and saving the functions of ${name}"
    VERBATIM)
endfunction()
