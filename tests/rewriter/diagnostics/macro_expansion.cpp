// Error: a construct whose rewriting needs an edit inside a macro's expansion: its keyword,
// parentheses or operator comes from the macro (or a macro argument), or a statement the
// rewrite must change is part of a macro use. Code that merely uses macros converts
// (golden/macros.cpp): these lines only.
// RUN: not ag-rewrite %s -- %flags 2>&1 | grep -v CHECK | FileCheck %s --implicit-check-not=error:
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags 2>/dev/null && test ! -e %t.out
#include <ag/ag.h>

#define CLAMP_POSITIVE(v) \
  if ((v) < 0) (v) = (v) * 0
#define LAZY_BOTH(a, b) ((a) && (b))
#define PARENS(a) (a)
#define LOOP_WHILE while
#define STEP_AND_BREAK(v) v = v + 1; break
#define LIMIT 7

AG_FUNCTION ag::Tensor f(ag::Tensor x, ag::Tensor y) {
  CLAMP_POSITIVE(x);
  ag::Tensor both = LAZY_BOTH(x > 0, y > 0);
  if (PARENS(x > 0 && y > 0)) y = y + 1;
  LOOP_WHILE (y < 20) y = y + 2;
  while (y < 30) { STEP_AND_BREAK(y); }
  while (y < LIMIT) y = y + LIMIT;
  return x + both;
}

#define CLOSE_LOOP(v) v = v + 1; }
AG_FUNCTION ag::Tensor g(ag::Tensor y) {
  while (y < 30) { CLOSE_LOOP(y)
  return y;
}

#define WHILE_BELOW(v, n) while ((v) < (n))
AG_FUNCTION ag::Tensor h(ag::Tensor y, int k) {
  WHILE_BELOW(k, 9) { k = k + 1; if (y > 0) break; }
  return y;
}
// CHECK-DAG: macro_expansion.cpp:35:3: error: the header of this statement needs rewriting but is inside a macro expansion; write it outside the macro
// CHECK-DAG: macro_expansion.cpp:29:31: error: this statement comes from a macro expansion that does not spell whole statements, so it cannot be kept as written in the converted function; make the macro expand to one whole statement (do { ... } while (0))
// CHECK-DAG: macro_expansion.cpp:18:3: error: this tensor-dependent if needs rewriting but is inside a macro expansion; write it outside the macro
// CHECK-DAG: macro_expansion.cpp:21:3: error: this tensor-dependent while needs rewriting but is inside a macro expansion; write it outside the macro
// CHECK-DAG: macro_expansion.cpp:19:21: error: this expression on tensors needs rewriting but is inside a macro expansion; write it outside the macro
// CHECK-DAG: macro_expansion.cpp:20:14: error: this expression on tensors needs rewriting but is inside a macro expansion; write it outside the macro
// CHECK-DAG: macro_expansion.cpp:22:20: error: this statement needs rewriting but is inside a macro expansion; write it outside the macro
