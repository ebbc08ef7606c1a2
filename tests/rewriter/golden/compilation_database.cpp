// -p <build dir>: the flags come from compile_commands.json (as clang tools do).
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: echo '[{"directory": "/", "file": "%s", "command": "clang++ -std=c++20 %flags -c %s -o x.o"}]' > %t.dir/compile_commands.json
// RUN: ag-rewrite -p %t.dir %s --no-line-directives --no-register | grep -v CHECK | FileCheck %s
#include <ag/ag.h>

AG_FUNCTION ag::Tensor relu(ag::Tensor x) {
  if (x < 0) x = x * 0;
  return x;
}
// CHECK: ag::if_stmt(x < 0,
// CHECK-NEXT: [&] { x = x * 0; },
