// Warning: no value before a staged if, assigned in one branch, used after it. No fix-it (the
// missing value is the user's to choose); the note says what to write, its caret where.
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

using ag::Tensor;
AG_FUNCTION Tensor g(Tensor x) {
  Tensor  v;
  if (x > 0) {
  } else {
    v = -x;
  }
  return v;
}
// CHECK: no_value_after_if.cpp:8:3: warning: 'y' has no value before this tensor-dependent if and is assigned only in the then branch, but is used after it; tracing will fail with a ConversionError
// CHECK-NEXT: {{^}}    8 |   if (x > 0) y = x;
// CHECK-NEXT: {{^}}      |   ^
// CHECK-NEXT: no_value_after_if.cpp:7:15: note: 'y' is declared here without a value: write 'ag::Tensor y = <value>;' with the value 'y' must have when the else branch runs, or assign 'y' in the else branch too
// CHECK-NEXT: {{^}}    7 |   ag::Tensor y;
// CHECK-NEXT: {{^}}      |   ~~~~~~~~~~~~^
// CHECK: no_value_after_if.cpp:21:3: warning: 'v' has no value before this tensor-dependent if and is assigned only in the else branch
// CHECK: no_value_after_if.cpp:20:12: note: 'v' is declared here without a value: write 'Tensor v = <value>;' with the value 'v' must have when the then branch runs, or assign 'v' in the then branch too
// CHECK-NOT: warning:
// CHECK-NOT: fix-it:
