// Corpus: macros used inside converted code (not holding it): object-like constants in
// conditions and operands, statement macros in staged bodies (each must run exactly once per
// iteration), a macro expanding to several statements, and an expression macro as a whole
// operand of && / ||.
#include <ag/ag.h>

#include "e2e.h"

using ag::Tensor;

#define SCALE 2
#define LIMIT 7
#define BUMP(v) v = v + 1
#define COUNT_AND_DOUBLE(c, v) c = c + 1; v = v * SCALE
#define IS_SMALL(v) ((v) < LIMIT)
#define CHECK_SCALAR(t) static_cast<void>((t).rank())

AG_FUNCTION Tensor scale_until_large(Tensor y) {
  Tensor steps = 0;
  while (y < 100) { y = y * SCALE; BUMP(steps); }
  return y + steps;
}
AG_E2E(scale_until_large, std::tuple{1}, std::tuple{3}, std::tuple{200});

AG_FUNCTION Tensor single_statement_bodies(Tensor y) {
  while (y < 100) y = y * SCALE;
  if (y > 150) y = y + SCALE;
  else BUMP(y);
  return y;
}
AG_E2E(single_statement_bodies, std::tuple{1}, std::tuple{5}, std::tuple{99});

AG_FUNCTION Tensor macro_operands(Tensor x, Tensor y) {
  Tensor both = x > 0 && y > LIMIT;
  Tensor either = IS_SMALL(x) || !(y > LIMIT);
  if (x > 0 && y > LIMIT) y = y - LIMIT;
  CHECK_SCALAR(y);
  return ag::where(both, y, -y) + ag::where(either, 1, 0);
}
AG_E2E(macro_operands, std::tuple{1, 8}, std::tuple{1, 3}, std::tuple{-1, 10}, std::tuple{9, 2});

AG_FUNCTION Tensor several_statements_in_one_macro(Tensor x) {
  Tensor count = 0;
  while (x < 50) { COUNT_AND_DOUBLE(count, x); }
  do { BUMP(x); CHECK_SCALAR(x); } while (x % 3 != 0);
  return x * 100 + count;
}
AG_E2E(several_statements_in_one_macro, std::tuple{1}, std::tuple{7}, std::tuple{60});

#define REPEAT(n) for (int i_ = 0; i_ < (n); ++i_)
AG_FUNCTION Tensor staged_code_in_a_macro_loop(Tensor y) {
  REPEAT(4) { if (y > 2) y = y - 3; else y = y * SCALE; }
  return y;
}
AG_E2E(staged_code_in_a_macro_loop, std::tuple{1}, std::tuple{10});
