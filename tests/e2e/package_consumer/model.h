// A header beside the annotated source: the rewritten copy must still find it.
#pragma once
#include <ag/ag.h>

inline constexpr int kModelLimit = 100;
ag::Tensor grow(ag::Tensor x);
