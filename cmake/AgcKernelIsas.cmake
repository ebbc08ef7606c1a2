# ag_add_kernel_isas(<target> SOURCES <files> ISAS <levels> INCLUDES <dirs> OPTIONS <flags>)
#
# Compiles <files> once per instruction-set level (an -march value: x86-64-v2, x86-64-v3,
# x86-64-v4, native) and adds one object per level to <target>. Each level's code lives in its
# own namespace (AG_KERNEL_NS) and its objects are linked into one relocatable object
# (ld -r --force-group-allocation: inline functions and templates from headers such as Eigen's
# are no longer COMDAT groups the final link could share between levels) whose only global
# symbol is its table, agc_kernels_<level> (objcopy --keep-global-symbol). So code compiled for
# AVX-512 can never be picked by the linker for a caller that runs on an AVX2 CPU.
# A generated kernel_sets.inc lists the tables, narrowest level first.
function(ag_add_kernel_isas target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;ISAS;INCLUDES;OPTIONS")
  find_program(AG_OBJCOPY NAMES objcopy REQUIRED)
  find_program(AG_LD NAMES ld.bfd ld REQUIRED)
  find_program(AG_READELF NAMES readelf REQUIRED)
  set(list_file "")
  foreach(isa IN LISTS arg_ISAS)
    string(MAKE_C_IDENTIFIER "${isa}" id)
    set(objects ag_kernels_${id})
    add_library(${objects} OBJECT ${arg_SOURCES})
    target_include_directories(${objects} PRIVATE ${arg_INCLUDES})
    target_compile_options(${objects} PRIVATE ${arg_OPTIONS} -march=${isa} -fno-lto)
    target_compile_definitions(${objects} PRIVATE AG_KERNEL_NS=isa_${id} AG_KERNEL_TABLE=agc_kernels_${id}
                                                  AG_KERNEL_ISA_NAME="${isa}")
    target_link_libraries(${objects} PRIVATE Eigen3::Eigen fmt::fmt)

    set(merged ${CMAKE_CURRENT_BINARY_DIR}/kernels_${id}.o)
    add_custom_command(
      OUTPUT ${merged}
      COMMAND ${AG_LD} -r --force-group-allocation -o ${merged} $<TARGET_OBJECTS:${objects}>
      COMMAND ${AG_OBJCOPY} --keep-global-symbol=agc_kernels_${id} ${merged}
      # Nothing of a level may run before its CPU check: no static initializers (sanitizers
      # add their own, which only register globals).
      COMMAND ${CMAKE_COMMAND} -DOBJECT=${merged} -DREADELF=${AG_READELF} -DALLOW=$<OR:$<BOOL:${AG_SANITIZE}>,$<BOOL:${AG_TSAN}>>
              -P ${PROJECT_SOURCE_DIR}/cmake/check_no_initializers.cmake
      DEPENDS ${objects} $<TARGET_OBJECTS:${objects}> ${PROJECT_SOURCE_DIR}/cmake/check_no_initializers.cmake
      COMMAND_EXPAND_LISTS
      VERBATIM
      COMMENT "Linking the ${isa} kernels into one isolated object")
    set_source_files_properties(${merged} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    target_sources(${target} PRIVATE ${merged})
    string(APPEND list_file "AG_KERNEL_SET(agc_kernels_${id})\n")
  endforeach()
  set(generated ${CMAKE_CURRENT_BINARY_DIR}/generated)
  file(CONFIGURE OUTPUT ${generated}/kernel_sets.inc CONTENT "${list_file}")
  target_include_directories(${target} PRIVATE ${generated})
endfunction()
