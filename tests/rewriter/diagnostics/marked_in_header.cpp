// Warning: an AG_FUNCTION with tensor control flow defined in a header stays unconverted.
// RUN: ag-rewrite %s -o %t.cpp -- %flags 2>&1 | grep -v CHECK | FileCheck %s
#include "inputs/marked_in_header.h"

AG_FUNCTION ag::Tensor f(ag::Tensor x) { return lib::header_relu(x) + lib::header_plain(x); }
// CHECK: marked_in_header.h:6:31: warning: 'header_relu' is marked AG_FUNCTION but is defined in a header, which ag-rewrite does not rewrite; its control flow on tensors stays unconverted: define it in a source file that is rewritten
// CHECK-NOT: header_plain
