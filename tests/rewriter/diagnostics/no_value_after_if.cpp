// Warning: no value before a staged if, assigned in one branch, used after it.
// RUN: ag-rewrite %s -o %t.cpp -- %flags -fdiagnostics-parseable-fixits 2>&1 | grep -v CHECK | FileCheck %s
#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  ag::Tensor y;
  if (x > 0) y = x;
  ag::Tensor z;
  if (x > 0) z = x;
  else z = -x;  // both branches: fine
  ag::Tensor w;
  if (x > 0) w = x;
  w = 1;  // assigned before it is read: fine
  return y + z + w;
}
// CHECK: no_value_after_if.cpp:7:3: warning: 'y' has no value before this tensor-dependent if and is assigned only in the then branch, but is used after it; tracing will fail with a ConversionError
// CHECK: no_value_after_if.cpp:6:14: note: 'y' is declared here
// CHECK-NOT: warning:
