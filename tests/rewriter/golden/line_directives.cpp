// #line directives (on by default) map the rewritten file back to the original: the file
// starts with `#line 1 "<original>"` and every original statement that moved is preceded by
// its line; the closing brace puts the numbering back for the rest of the file. Compiling the
// output with errors in it reports the original lines (also in code between statements that
// the rewrite's configuration did not compile).
// RUN: ag-rewrite %s -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && not %cxx -fsyntax-only %flags -DAG_REWRITTEN -DBREAK_IT %t.cpp 2>&1 | FileCheck %s --check-prefix=ERROR
#include <ag/ag.h>

AG_FUNCTION ag::Tensor halve_until_small(ag::Tensor x) {
  ag::Tensor steps = 0;
  while (x > 10) {
    x = x / 2;
#ifdef BREAK_IT
    undeclared_identifier += 1;
#endif
    steps += 1;
  }
  return steps;
}

int after_the_function() { return 0; }
#ifdef BREAK_IT
static_assert(sizeof(int) == 0, "line 23");
#endif

// CHECK: #line 1 "{{.*}}line_directives.cpp"
// CHECK: AG_FUNCTION ag::Tensor halve_until_small(ag::Tensor x) {
// CHECK-NEXT:   ag::Tensor steps = 0;
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return x > 10; },
// CHECK-NEXT:       [&] {
// CHECK-NEXT: #line 13
// CHECK-NEXT:         x = x / 2;
// CHECK-NEXT:         #ifdef BREAK_IT
// CHECK-NEXT:         undeclared_identifier += 1;
// CHECK-NEXT:         #endif
// CHECK-NEXT:         steps += 1;
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(steps, x), {"steps", "x"}, AG_SOURCE_LOC("line_directives.cpp", 12));
// CHECK-NEXT: #line 19
// CHECK-NEXT:   return steps;
// CHECK-NEXT: #line 20
// CHECK-NEXT: }
// ERROR: line_directives.cpp:15:{{[0-9]+}}: error: use of undeclared identifier 'undeclared_identifier'
// ERROR: line_directives.cpp:24:15: error: static assertion failed
