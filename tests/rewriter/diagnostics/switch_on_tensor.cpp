// Error: switch on a tensor. (A non-template `switch (tensor)` does not even compile: Tensor's
// operator bool is explicit. In a template the value may be a tensor: that is the error.)
// RUN: not ag-rewrite %s -- %flags 2>&1 | grep -v CHECK | FileCheck %s
// RUN: rm -f %t.out && not ag-rewrite %s -o %t.out -- %flags 2>/dev/null && test ! -e %t.out
#include <ag/ag.h>

template <class T>
AG_FUNCTION T f(T x, int mode) {
  switch (mode) {  // a C++ value: fine
    case 1: x = x + 1; break;
  }
  switch (x) {
    case 1: return x;
  }
  return x;
}
// CHECK: switch_on_tensor.cpp:12:3: error: switch on a tensor cannot be converted; use if / else if on the tensor's value
// CHECK-NOT: switch_on_tensor.cpp:9
