# g++ must compile ag-rewrite's output too: -fsyntax-only of every rewritten corpus file, with
# no warning in the corpus' own lines (#line maps the output back to corpus/*.cpp; warnings of
# agc's headers are theirs).
#   cmake -DGXX=... -DFILES=a;b -DFLAGS=... -P gxx_check.cmake
separate_arguments(flags NATIVE_COMMAND "${FLAGS}")
foreach(file IN LISTS FILES)
  execute_process(COMMAND ${GXX} -fsyntax-only -std=c++20 -Wall -Wextra -DAG_REWRITTEN ${flags} ${file}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR err MATCHES "corpus/[a-z_]+\\.cpp:[0-9]+:[0-9]+: warning")
    message(FATAL_ERROR "g++ rejects ${file} or warns about it:\n${err}")
  endif()
endforeach()
