// Warning: a variable first given a value inside a staged loop and used after it. No fix-it
// (the value for zero iterations is the user's to choose); the note says what to write, its
// caret where.
// RUN: ag-rewrite %s -o %t.cpp -- %flags -fdiagnostics-parseable-fixits 2>&1 | grep -v CHECK | FileCheck %s
#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor n) {
  ag::Tensor last;
  for (auto i : ag::range(n)) last = i;
  return last;
}
// CHECK: no_value_after_loop.cpp:9:3: warning: 'last' has no value before this tensor-dependent loop and is used after it; the loop may run zero times, so tracing will fail with a ConversionError
// CHECK-NEXT: {{^}}    9 |   for (auto i : ag::range(n)) last = i;
// CHECK-NEXT: {{^}}      |   ^
// CHECK-NEXT: no_value_after_loop.cpp:8:18: note: 'last' is declared here without a value: write 'ag::Tensor last = <value>;' with the value 'last' must have when the loop runs zero times
// CHECK-NEXT: {{^}}    8 |   ag::Tensor last;
// CHECK-NEXT: {{^}}      |   ~~~~~~~~~~~~~~~^
// CHECK-NOT: fix-it:
