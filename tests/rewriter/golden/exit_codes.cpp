// Exit codes: 0 success, 1 conversion (or compile) errors, 2 usage errors; nothing is written
// on failure.
// RUN: ag-rewrite %s -- %flags > /dev/null
// RUN: ag-rewrite %s > /dev/null 2>&1; test $? -eq 2
// RUN: ag-rewrite %s -- %flags 2>&1 >/dev/null | FileCheck %s --allow-empty --check-prefix=QUIET
// RUN: ag-rewrite %s --no-such-option -- %flags > /dev/null 2>&1; test $? -eq 2
// RUN: ag-rewrite %s %s -o %t.out -- %flags > /dev/null 2>&1; test $? -eq 2
// RUN: ag-rewrite %s -- %flags -DMAKE_IT_FAIL > /dev/null 2>&1; test $? -eq 1
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags -DMAKE_IT_FAIL 2> /dev/null && test ! -e %t.out
// RUN: not ag-rewrite %s 2>&1 | FileCheck %s --check-prefix=USAGE
#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  if (x > 0) {
    x = -x;
#ifdef MAKE_IT_FAIL
    goto done;
#endif
  }
  while (x < 0) x += 3;
done:
  return x;
}
// QUIET-NOT: {{.}}
// USAGE: ag-rewrite: error: no compiler flags: pass them after '--'
