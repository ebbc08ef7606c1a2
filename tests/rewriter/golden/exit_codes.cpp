// Exit codes: 0 success, 1 conversion (or compile) errors, 2 usage errors (bad options, a
// missing input file or a directory given as one, -p without a compilation database, --diff
// with -o); nothing is written on failure.
// RUN: ag-rewrite %s -- %flags > /dev/null
// RUN: ag-rewrite %s > /dev/null 2>&1; test $? -eq 2
// RUN: ag-rewrite %s -- %flags 2>&1 >/dev/null | FileCheck %s --allow-empty --check-prefix=QUIET
// RUN: ag-rewrite %s --no-such-option -- %flags > /dev/null 2>&1; test $? -eq 2
// RUN: ag-rewrite %s %s -o %t.out -- %flags > /dev/null 2>&1; test $? -eq 2
// RUN: ag-rewrite %s -- %flags -DMAKE_IT_FAIL > /dev/null 2>&1; test $? -eq 1
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags -DMAKE_IT_FAIL 2> /dev/null && test ! -e %t.out
// RUN: not ag-rewrite %s 2>&1 | FileCheck %s --check-prefix=USAGE
// RUN: ag-rewrite %s.missing.cpp -- %flags > /dev/null 2>&1; test $? -eq 2
// RUN: not ag-rewrite %s.missing.cpp -- %flags 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: ag-rewrite %s -p /nonexistent-ag-rewrite-build > /dev/null 2>&1; test $? -eq 2
// RUN: not ag-rewrite %s -p=/nonexistent-ag-rewrite-build 2>&1 | FileCheck %s --check-prefix=NODB
// RUN: rm -f %t.out && ag-rewrite %s --diff -o %t.out -- %flags > /dev/null 2>&1; test $? -eq 2 && test ! -e %t.out
// RUN: not ag-rewrite %s --diff -o %t.out -- %flags 2>&1 | FileCheck %s --check-prefix=DIFF
// RUN: rm -rf %t.dir %t.out && mkdir %t.dir && ag-rewrite %t.dir/ -o %t.out -- %flags > /dev/null 2>&1; test $? -eq 2 && test ! -e %t.out
// RUN: not ag-rewrite %t.dir/ -- %flags 2>&1 | FileCheck %s --check-prefix=DIRECTORY
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
// MISSING: ag-rewrite: error: no such file: '{{.*}}exit_codes.cpp.missing.cpp'
// MISSING-NOT: error:
// NODB: ag-rewrite: error: -p /nonexistent-ag-rewrite-build: no compilation database (compile_commands.json) in '/nonexistent-ag-rewrite-build' or a directory above it
// NODB-NOT: {{.}}
// DIFF: ag-rewrite: error: --diff prints to stdout and cannot be combined with -o
// DIRECTORY: ag-rewrite: error: '{{.*}}exit_codes.tmp.dir/' is a directory, not a source file: name the files to rewrite (ag-rewrite file.cpp ... -- <flags>; in CMake, ag_rewrite_sources(<target> <files>))
// DIRECTORY-NOT: {{.}}
