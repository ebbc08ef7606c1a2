// Warning: a variable first given a value inside a staged loop and used after it.
// RUN: ag-rewrite %s -o %t.cpp -- %flags -fdiagnostics-parseable-fixits 2>&1 | grep -v CHECK | FileCheck %s
#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor n) {
  ag::Tensor last;
  for (auto i : ag::range(n)) last = i;
  return last;
}
// CHECK: no_value_after_loop.cpp:7:3: warning: 'last' has no value before this tensor-dependent loop and is used after it; the loop may run zero times, so tracing will fail with a ConversionError
// CHECK: no_value_after_loop.cpp:6:14: note: 'last' is declared here
