// Warning: a converted function calls a same-file unmarked function with tensor control flow.
// RUN: ag-rewrite %s -o %t.cpp -- %flags -fdiagnostics-parseable-fixits 2>&1 | grep -v CHECK | FileCheck %s
#include <ag/ag.h>

ag::Tensor helper(ag::Tensor x) {
  if (x > 0) return x;
  return -x;
}
ag::Tensor plain_helper(ag::Tensor x) { return x * 2; }

AG_FUNCTION ag::Tensor f(ag::Tensor x) { return helper(x) + plain_helper(x); }
// CHECK: unmarked_callee.cpp:11:49: warning: 'helper' has control flow on tensors but is not marked AG_FUNCTION; calling it from a traced function will fail with a ConversionError
// CHECK: unmarked_callee.cpp:5:12: note: mark 'helper' AG_FUNCTION
// CHECK: fix-it:"{{.*}}unmarked_callee.cpp":{5:1-5:1}:"AG_FUNCTION "
// CHECK-NOT: plain_helper
