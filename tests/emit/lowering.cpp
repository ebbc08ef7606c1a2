// Golden test of the lowering, through ag-emit: the fused plan, the IR as lowered and after
// optimization (for x86-64-v3, so the vector width does not depend on the machine).
// RUN: ag-emit %s scaled_relu float32[1024] float32[] --emit=plan | FileCheck %s --check-prefix=PLAN
// RUN: ag-emit %s scaled_relu float32[1024] float32[] --emit=ir | FileCheck %s --check-prefix=IR --implicit-check-not=agc_rt_alloc
// RUN: AG_JIT_CPU=x86-64-v3 ag-emit %s scaled_relu float32[1024] float32[] --emit=ir-opt | FileCheck %s --check-prefix=OPT
// RUN: ag-emit %s collatz int32[] --emit=ir | FileCheck %s --check-prefix=LOOP
#include <ag/ag.h>

using ag::Tensor;

// One fused loop: no intermediate buffer between the multiply, the add and the relu; lowered as
// vector code (lower_fused_vector.cpp) of the target's width, the scalar `a` broadcast.
AG_FUNCTION Tensor scaled_relu(Tensor x, Tensor a) { return ag::relu(x * a + 1.0f); }
// PLAN:      graph scaled_relu(%0: f32[1024], %1: f32[]) -> (f32[1024]) {
// PLAN:      Mul(%0, %1) : f32[1024]  [fused, group=[[GROUP:%[0-9]+]]]
// PLAN:      Add({{.*}}) : f32[1024]  [fused, group=[[GROUP]]]
// PLAN-NEXT: [[GROUP]] = Relu({{.*}}) : f32[1024]  [dest 0, group=[[GROUP]]]
// (In either order: a size that leaves a partial block puts the blocks after the loop's exit.)
// IR:        define {{.*}}i32 @agc_entry(
// IR-DAG:    fmul <{{[0-9]+}} x float>
// IR-DAG:    fadd <{{[0-9]+}} x float>
// IR-DAG:    ret i32 0
// OPT:       define {{.*}}i32 @agc_entry(
// OPT:       fmul <8 x float>
// OPT:       fadd <8 x float>

// A staged while loop is a loop in the IR, with its condition's compare and branch.
AG_FUNCTION Tensor collatz(Tensor n) {
  Tensor steps = 0;
  while (n > 1) {
    if (n % 2 == 0) n = n / 2;
    else n = 3 * n + 1;
    steps += 1;
  }
  return steps;
}
// LOOP:      define {{.*}}i32 @agc_entry(
// LOOP:      while.cond:
// LOOP-NEXT:   phi i32
// LOOP-NEXT:   phi i32
// LOOP-NEXT:   icmp sgt i32 %{{[0-9]+}}, 1
// LOOP-NEXT:   br i1 %{{[0-9]+}}, label %while.body, label %while.end
// LOOP:      srem i32
