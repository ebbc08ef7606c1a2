# cmake -DOBJECT=<file.o> -DREADELF=<readelf> -P check_no_initializers.cmake
# Fails when the object has static initializers (.init_array/.ctors): in a per-ISA kernel
# object they would run at program start, before the CPU check, and could use instructions the
# CPU lacks.
if(ALLOW)
  return()
endif()
execute_process(COMMAND ${READELF} -SW ${OBJECT} OUTPUT_VARIABLE sections RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf failed on ${OBJECT}")
endif()
if(sections MATCHES "\\.init_array|\\.ctors")
  message(FATAL_ERROR "${OBJECT} has static initializers; per-ISA kernel code must not (see AgcKernelIsas.cmake)")
endif()
