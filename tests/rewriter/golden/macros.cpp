// Golden test of macros used inside converted code: a macro use is kept as written, exactly
// once (statements that are macro uses, object-like constants at the end of a branch or
// condition, a macro spelling several statements); && / || with macro operands are converted.
// Comments and preprocessor lines between statements are kept once too.
// RUN: ag-rewrite %s --no-line-directives --no-register -- %flags | grep -v CHECK | FileCheck %s
// RUN: ag-rewrite %s -o %t.cpp -- %flags && %cxx -fsyntax-only -Wall -Wextra -Werror %flags -DAG_REWRITTEN %t.cpp
#include <ag/ag.h>

#include <cassert>

#define SCALE 2
#define LIMIT 7
#define BUMP(v) v = v + 1
#define TWO_STEPS(v) v = v + 1; v = v * SCALE
#define NOTHING

AG_FUNCTION ag::Tensor bodies(ag::Tensor y) {
  while (y < 100) { y = y * SCALE; }
  if (y > 5) { y = y + SCALE; }
  while (y < 200) y = y * SCALE;
  if (y > 5) y = y + SCALE;
  else BUMP(y);
  while (y < 300) {
    assert(y.rank() == 0);  // a macro statement
    BUMP(y);
    NOTHING
#if 0
    y = y * 1000;
#endif
    TWO_STEPS(y);
  }
  return y;
}
// CHECK-LABEL: AG_FUNCTION ag::Tensor bodies(ag::Tensor y) {
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return y < 100; },
// CHECK-NEXT:       [&] { y = y * SCALE; },
// CHECK-NEXT:       ag::state(y), {"y"}, AG_SOURCE_LOC("macros.cpp", 18));
// CHECK-NEXT:   ag::if_stmt(y > 5,
// CHECK-NEXT:       [&] { y = y + SCALE; },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(y), {"y"}, AG_SOURCE_LOC("macros.cpp", 19));
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return y < 200; },
// CHECK-NEXT:       [&] { y = y * SCALE; },
// CHECK-NEXT:       ag::state(y), {"y"}, AG_SOURCE_LOC("macros.cpp", 20));
// CHECK-NEXT:   ag::if_stmt(y > 5,
// CHECK-NEXT:       [&] { y = y + SCALE; },
// CHECK-NEXT:       [&] { BUMP(y); },
// CHECK-NEXT:       ag::state(y), {"y"}, AG_SOURCE_LOC("macros.cpp", 21));
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return y < 300; },
// CHECK-NEXT:       [&] {
// CHECK-NEXT:         assert(y.rank() == 0);  // a macro statement
// CHECK-NEXT:         BUMP(y);
// CHECK-NEXT:         NOTHING
// CHECK-NEXT:         #if 0
// CHECK-NEXT:         y = y * 1000;
// CHECK-NEXT:         #endif
// CHECK-NEXT:         TWO_STEPS(y);
// CHECK-NEXT:       },
// CHECK-NEXT:       ag::state(y), {"y"}, AG_SOURCE_LOC("macros.cpp", 23));
// CHECK-NEXT:   return y;
// CHECK-NEXT: }

AG_FUNCTION ag::Tensor operands(ag::Tensor x, ag::Tensor y) {
  ag::Tensor both = x > 0 && y > LIMIT;
  if (x > 0 && y > LIMIT) y = y - LIMIT;
  while (!(y > LIMIT) || x < SCALE) x = x + SCALE, y = y + 1;
  return both;
}
// CHECK-LABEL: AG_FUNCTION ag::Tensor operands(ag::Tensor x, ag::Tensor y) {
// CHECK-NEXT:   ag::Tensor both = ag::and_(x > 0, [&] { return y > LIMIT; }, AG_SOURCE_LOC("macros.cpp", 67));
// CHECK-NEXT:   ag::if_stmt(ag::and_(x > 0, [&] { return y > LIMIT; }, AG_SOURCE_LOC("macros.cpp", 68)),
// CHECK-NEXT:       [&] { y = y - LIMIT; },
// CHECK-NEXT:       [&] {},
// CHECK-NEXT:       ag::state(y), {"y"}, AG_SOURCE_LOC("macros.cpp", 68));
// CHECK-NEXT:   ag::while_stmt(
// CHECK-NEXT:       [&] { return ag::or_(ag::not_((y > LIMIT), AG_SOURCE_LOC("macros.cpp", 69)), [&] { return x < SCALE; }, AG_SOURCE_LOC("macros.cpp", 69)); },
// CHECK-NEXT:       [&] { x = x + SCALE, y = y + 1; },
// CHECK-NEXT:       ag::state(x, y), {"x", "y"}, AG_SOURCE_LOC("macros.cpp", 69));
// CHECK-NEXT:   return both;
// CHECK-NEXT: }

// A plain (C++) if or loop spelled by a macro keeps the macro use as its header.
#define REPEAT(n) for (int i_ = 0; i_ < (n); ++i_)
#define IF_SMALL(v) if ((v) < 3)
AG_FUNCTION ag::Tensor plain_headers_from_macros(ag::Tensor y, int k) {
  REPEAT(3) { if (y > 0) y = y - 1; }
  IF_SMALL(k) { if (y > 0) y = y - 1; }
  return y;
}
// CHECK-LABEL: AG_FUNCTION ag::Tensor plain_headers_from_macros(ag::Tensor y, int k) {
// CHECK-NEXT:   REPEAT(3) {
// CHECK-NEXT:     ag::if_stmt(y > 0,
// CHECK-NEXT:         [&] { y = y - 1; },
// CHECK-NEXT:         [&] {},
// CHECK-NEXT:         ag::state(y), {"y"}, AG_SOURCE_LOC("macros.cpp", 89));
// CHECK-NEXT:   }
// CHECK-NEXT:   IF_SMALL(k) {
// CHECK-NEXT:     ag::if_stmt(y > 0,
