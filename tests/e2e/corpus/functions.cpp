// Corpus: function templates, member functions and lambdas defined in converted functions.
#include <ag/ag.h>

#include "e2e.h"

using ag::Tensor;

template <class T>
AG_FUNCTION T twice_if_positive(T x) {
  if (x > 0) x = x * 2;
  return x;
}

// The template is converted once; here it runs with a tensor (staged) and a float (plain C++).
AG_FUNCTION Tensor template_both_ways(Tensor x) {
  const float scale = twice_if_positive(1.5f);
  return twice_if_positive(x) * scale;
}
AG_E2E(template_both_ways, std::tuple{2.0f}, std::tuple{-2.0f});

Tensor template_instance(Tensor x) { return twice_if_positive<Tensor>(x); }
AG_E2E(template_instance, std::tuple{3}, std::tuple{-3});

struct Threshold {
  Tensor limit;
  AG_FUNCTION Tensor apply(Tensor x) const {
    Tensor y = x;
    while (y > limit) y = y - limit;
    return y;
  }
};

Tensor member_function(Tensor x) { return Threshold{Tensor(7)}.apply(x); }
AG_E2E(member_function, std::tuple{30}, std::tuple{3});

AG_FUNCTION Tensor lambdas_inside(Tensor x) {
  auto relu = [](Tensor v) -> Tensor {
    if (v < 0) return v * 0;
    return v;
  };
  auto steps = [&](Tensor v) {
    Tensor s = 0;
    while (v > 1) {
      v = v / 2;
      s += 1;
    }
    return s;
  };
  return relu(x) * 100 + steps(relu(x));
}
AG_E2E(lambdas_inside, std::tuple{40}, std::tuple{-40});

// AG_DO_NOT_CONVERT: the helper's `if` stays plain C++ (the rewriter's diagnostics test checks the
// text); called on a tensor with a value while tracing, it branches natively.
AG_DO_NOT_CONVERT Tensor sign_of_known(Tensor k) {
  if (k > 0) return Tensor(1);
  return Tensor(-1);
}
AG_FUNCTION Tensor uses_unconverted_helper(Tensor x) {
  if (x > 0) x = x * 2;
  return x * sign_of_known(Tensor(-5));
}
AG_E2E(uses_unconverted_helper, std::tuple{4}, std::tuple{-4});
