// Free AG_FUNCTIONs register their name and parameter names with the runtime (for signatures
// and retrace logs), converted or not (straight-line code too); member functions and templates
// do not (no plain address).
// RUN: ag-rewrite %s --no-line-directives -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

namespace demo {
AG_FUNCTION ag::Tensor clamp_low(ag::Tensor x, ag::Tensor) {
  if (x < 0) x = x * 0;
  return x;
}
}  // namespace demo

AG_FUNCTION ag::Tensor scale_and_shift(ag::Tensor x, float scale) { return x * scale + 1.f; }

template <class T>
AG_FUNCTION T twice(T x) {
  if (x > 0) x = x * 2;
  return x;
}

// CHECK: } static const bool ag__info_clamp_low_9 = ::ag::detail::register_function_info(reinterpret_cast<const void*>(static_cast<ag::Tensor (*)(ag::Tensor, ag::Tensor)>(&clamp_low)), "clamp_low", {"x", "arg1"});
// CHECK-NEXT: }  // namespace demo
// CHECK: AG_FUNCTION ag::Tensor scale_and_shift(ag::Tensor x, float scale) { return x * scale + 1.f; } static const bool ag__info_scale_and_shift_15 = ::ag::detail::register_function_info(reinterpret_cast<const void*>(static_cast<ag::Tensor (*)(ag::Tensor, float)>(&scale_and_shift)), "scale_and_shift", {"x", "scale"});
// CHECK: AG_FUNCTION T twice(T x) {
// CHECK: {{^}}}{{$}}

// With -o, the file's last line registers the original and its rewritten copy (the HTML report
// shows them side by side); at the end of this file so that no line above moves; --no-register leaves it out.
// RUN: ag-rewrite %s -o %t.cpp -- %flags && grep -v 'SOURCE:' %t.cpp | FileCheck %s --check-prefix=SOURCE
// RUN: ag-rewrite %s -o %t.cpp --no-register -- %flags && test "$(grep -v SOURCE: %t.cpp | grep -c register_source_file)" = 0
// SOURCE: {{^}}static const bool ag__source_file = ::ag::detail::register_source_file("/{{.*}}/function_registration.cpp", "/{{.*}}.cpp");
