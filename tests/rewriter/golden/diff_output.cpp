// --diff prints only what changed, as a unified diff against the original.
// RUN: ag-rewrite %s --diff --no-register -- %flags | grep -v CHECK | FileCheck %s
#include <ag/ag.h>

AG_FUNCTION ag::Tensor relu(ag::Tensor x) {
  if (x < 0) x = x * 0;
  return x;
}

// CHECK: --- {{.*}}diff_output.cpp
// CHECK-NEXT: +++ {{.*}}diff_output.cpp (rewritten)
// CHECK-NEXT: @@ -0,0 +1 @@
// CHECK-NEXT: +#line 1 "{{.*}}diff_output.cpp"
// CHECK-NEXT: @@ -5,4 +6,10 @@
// CHECK-NEXT: -AG_FUNCTION ag::Tensor relu(ag::Tensor x) {
// CHECK-NEXT: -  if (x < 0) x = x * 0;
// CHECK-NEXT: -  return x;
// CHECK-NEXT: -}
// CHECK-NEXT: +AG_FUNCTION ag::Tensor relu(ag::Tensor x) {
// CHECK-NEXT: +  ag::if_stmt(x < 0,
// CHECK-NEXT: +#line 6
// CHECK-NEXT: +      [&] { x = x * 0; },
// CHECK-NEXT: +      [&] {},
// CHECK-NEXT: +      ag::state(x), {"x"}, AG_SOURCE_LOC("diff_output.cpp", 6));
// CHECK-NEXT: +#line 7
// CHECK-NEXT: +  return x;
// CHECK-NEXT: +#line 8
// CHECK-NEXT: +}
// CHECK-NOT: {{.}}
