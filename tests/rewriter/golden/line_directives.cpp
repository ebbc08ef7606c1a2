// #line directives (on by default) map the rewritten file back to the original: the file
// starts with `#line 1 "<original>"` and every original statement that moved is preceded by
// its line; the closing brace puts the numbering back for the rest of the file. Compiling the
// output with errors in it reports the original lines (also in code between statements that
// the rewrite's configuration did not compile). Code that moves into a lambda on a line of its
// own (a branch written on the line of its `if`, an `else` on the next line, a loop condition)
// gets a #line too: every piece of original code is compiled on its original line.
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

#ifdef BREAK_IT
#define THEN_VALUE undeclared_in_then
#define ELSE_VALUE undeclared_in_else
#else
#define THEN_VALUE 2
#define ELSE_VALUE 3
#endif
AG_FUNCTION ag::Tensor single_line_branches(ag::Tensor n) {
  if (n % 2 == 0) n = n / THEN_VALUE;
  else n = ELSE_VALUE * n + 1;
  return n;
}

int after_the_function() { return 0; }
#ifdef BREAK_IT
static_assert(sizeof(int) == 0, "line 39");
#endif

// CHECK: #line 1 "{{.*}}line_directives.cpp"
// CHECK: AG_FUNCTION ag::Tensor halve_until_small(ag::Tensor x) {
// CHECK-NEXT:   ag::Tensor steps = 0;
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT: #line 14
// CHECK-NEXT:       [&] { return x > 10; },
// CHECK-NEXT:       [&] {
// CHECK-NEXT: #line 15
// CHECK-NEXT:         x = x / 2;
// CHECK-NEXT:         #ifdef BREAK_IT
// CHECK-NEXT:         undeclared_identifier += 1;
// CHECK-NEXT:         #endif
// CHECK-NEXT:         steps += 1;
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(steps, x), {"steps", "x"}, AG_SOURCE_LOC("line_directives.cpp", 14));
// CHECK-NEXT: #line 21
// CHECK-NEXT:   return steps;
// CHECK-NEXT: #line 22
// CHECK-NEXT: }
// CHECK: AG_FUNCTION ag::Tensor single_line_branches(ag::Tensor n) {
// CHECK-NEXT:   ag::if_stmt(n % 2 == 0,
// CHECK-NEXT: #line 32
// CHECK-NEXT:       [&] { n = n / THEN_VALUE; },
// CHECK-NEXT:       [&] { n = ELSE_VALUE * n + 1; },
// CHECK-NEXT:       ag::state(n), {"n"}, AG_SOURCE_LOC("line_directives.cpp", 32));
// CHECK-NEXT: #line 34
// CHECK-NEXT:   return n;
// ERROR: line_directives.cpp:17:{{[0-9]+}}: error: use of undeclared identifier 'undeclared_identifier'
// ERROR: line_directives.cpp:32:{{[0-9]+}}: error: use of undeclared identifier 'undeclared_in_then'
// ERROR: line_directives.cpp:33:{{[0-9]+}}: error: use of undeclared identifier 'undeclared_in_else'
// ERROR: line_directives.cpp:39:15: error: static assertion failed
