// The consumer's annotated function.
#include "model.h"

AG_FUNCTION ag::Tensor grow(ag::Tensor x) {
  ag::Tensor steps = 0;
  while (x < kModelLimit) {
    if (x % 2 == 0) x = x * 3;
    else x = x + 1;
    steps += 1;
  }
  return steps * 1000 + x;
}
