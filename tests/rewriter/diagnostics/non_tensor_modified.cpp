// Warning: a non-tensor local modified under a tensor condition, with a fix-it.
// RUN: ag-rewrite %s -o %t.cpp -- %flags -fdiagnostics-parseable-fixits 2>&1 | grep -v CHECK | FileCheck %s
#include <ag/ag.h>

AG_FUNCTION ag::Tensor f(ag::Tensor x) {
  int count = 0;
  while (x > 1) {
    x = x / 2;
    count += 1;
  }
  return x + count;
}
// CHECK: non_tensor_modified.cpp:9:5: warning: 'count' (of type 'int') is modified inside a tensor-dependent while; staging it will fail with a ConversionError: only locals of tensor type (ag::Tensor, ag::TensorArray, a std::array or std::vector of them, a struct of those) can change inside staged control flow
// CHECK: fix-it:"{{.*}}non_tensor_modified.cpp":{6:3-6:6}:"ag::Tensor"
