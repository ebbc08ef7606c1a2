// Converted free functions register their name and parameter names with the runtime (for
// signatures and retrace logs); member functions and templates do not (no plain address).
// RUN: ag-rewrite %s --no-line-directives -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

namespace demo {
AG_FUNCTION ag::Tensor clamp_low(ag::Tensor x, ag::Tensor) {
  if (x < 0) x = x * 0;
  return x;
}
}  // namespace demo

template <class T>
AG_FUNCTION T twice(T x) {
  if (x > 0) x = x * 2;
  return x;
}

// CHECK: } static const bool ag__info_clamp_low_8 = ::ag::detail::register_function_info(reinterpret_cast<const void*>(static_cast<ag::Tensor (*)(ag::Tensor, ag::Tensor)>(&clamp_low)), "clamp_low", {"x", "arg1"});
// CHECK-NEXT: }  // namespace demo
// CHECK: AG_FUNCTION T twice(T x) {
// CHECK: {{^}}}{{$}}
