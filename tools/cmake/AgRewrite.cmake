# ag_rewrite_sources(<target> <files...>)
#
# Rewrites <files> (sources of <target> with AG_FUNCTION functions) with ag-rewrite at build
# time into <target>'s binary directory and compiles the rewritten copies in their place:
#  - the flags the tool parses with are the target's include directories and definitions, and
#    its CXX_STANDARD but at least C++20 (agc's headers are C++20, and agc::runtime raises the
#    target's compiles to C++20 through its compile feature: the tool must parse as they compile);
#  - the rewritten copy is compiled with the original's directory first on the quoted include
#    path (so `#include "x.h"` resolves as from the original) and with AG_REWRITTEN defined;
#  - #line directives send compiler errors and debuggers back to the original lines;
#  - a depfile makes editing the file, or any header it includes, re-run the rewrite.
# Works in agc's own build tree and through find_package(agc CONFIG).

# Functions record the policies in effect where they are defined: DEPFILE paths are handled
# by CMake for every generator (CMP0116), whatever the caller's cmake_minimum_required.
cmake_policy(PUSH)
cmake_policy(SET CMP0116 NEW)

function(ag_rewrite_sources target)
  if(NOT TARGET ${target})
    message(FATAL_ERROR "ag_rewrite_sources: '${target}' is not a target")
  endif()
  if(TARGET ag-rewrite)
    set(tool ag-rewrite)  # agc's own build tree
  elseif(TARGET agc::ag-rewrite)
    set(tool agc::ag-rewrite)
  else()
    message(FATAL_ERROR "ag_rewrite_sources: no ag-rewrite executable (find_package(agc CONFIG) first)")
  endif()
  get_target_property(source_dir ${target} SOURCE_DIR)
  get_target_property(binary_dir ${target} BINARY_DIR)

  set(includes "$<TARGET_PROPERTY:${target},INCLUDE_DIRECTORIES>")
  set(definitions "$<TARGET_PROPERTY:${target},COMPILE_DEFINITIONS>")
  set(standard "$<TARGET_PROPERTY:${target},CXX_STANDARD>")

  foreach(file IN LISTS ARGN)
    get_filename_component(original "${file}" ABSOLUTE BASE_DIR "${source_dir}")
    get_filename_component(original_dir "${original}" DIRECTORY)
    file(RELATIVE_PATH relative "${source_dir}" "${original}")
    if(relative MATCHES "^\\.\\./")  # outside the target's directory: keep the name only
      get_filename_component(relative "${original}" NAME)
    endif()
    set(rewritten "${binary_dir}/ag_rewritten/${target}/${relative}")
    add_custom_command(
      OUTPUT "${rewritten}"
      COMMAND ${tool} "${original}" -o "${rewritten}" --depfile "${rewritten}.d" --
              "$<IF:$<OR:$<STREQUAL:${standard},98>,$<VERSION_LESS:${standard},20>>,-std=c++20,-std=c++${standard}>"
              "$<$<BOOL:${includes}>:-I$<JOIN:${includes},;-I>>"
              "$<$<BOOL:${definitions}>:-D$<JOIN:${definitions},;-D>>"
      DEPENDS "${original}" ${tool}
      DEPFILE "${rewritten}.d"
      COMMENT "ag-rewrite ${relative}"
      COMMAND_EXPAND_LISTS
      VERBATIM)
    # The original stays listed (IDEs show it) but only the rewritten copy is compiled.
    set_source_files_properties("${original}" TARGET_DIRECTORY ${target} PROPERTIES HEADER_FILE_ONLY ON)
    set_source_files_properties("${rewritten}" TARGET_DIRECTORY ${target} PROPERTIES
      GENERATED ON
      COMPILE_OPTIONS "-iquote;${original_dir}"
      COMPILE_DEFINITIONS AG_REWRITTEN)
    target_sources(${target} PRIVATE "${rewritten}")
  endforeach()
endfunction()

cmake_policy(POP)
