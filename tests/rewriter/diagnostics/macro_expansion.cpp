// Error: control flow that needs rewriting inside a macro expansion.
// RUN: not ag-rewrite %s -- %flags 2>&1 | grep -v CHECK | FileCheck %s
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags 2>/dev/null && test ! -e %t.out
#include <ag/ag.h>

#define CLAMP_POSITIVE(v) \
  if ((v) < 0) (v) = (v) * 0
#define LAZY_BOTH(a, b) ((a) && (b))

AG_FUNCTION ag::Tensor f(ag::Tensor x, ag::Tensor y) {
  CLAMP_POSITIVE(x);
  ag::Tensor both = LAZY_BOTH(x > 0, y > 0);
  return x + both;
}
// CHECK: macro_expansion.cpp:11:3: error: this tensor-dependent if needs rewriting but is inside a macro expansion; write it outside the macro
// CHECK: macro_expansion.cpp:12:21: error: this expression on tensors needs rewriting but is inside a macro expansion; write it outside the macro
