// An environment variable that names one of a few choices (AG_GEMM_HALVES, AG_LOOP_SPLITS).
#pragma once

#include <fmt/format.h>

#include <cstdlib>
#include <initializer_list>
#include <string_view>
#include <utility>

#include "ag/error.h"

namespace ag::detail {

// The choice `name` names: `unset` when it is unset or empty, a ValueError naming the variable
// and `expected` (the words it takes) for a word not among `choices`.
template <class E>
E env_choice(const char* name, E unset, std::initializer_list<std::pair<std::string_view, E>> choices, std::string_view expected) {
  const char* e = std::getenv(name);
  if (!e || !*e) return unset;
  for (const auto& [word, choice] : choices)
    if (word == e) return choice;
  throw ValueError(fmt::format("{}={}: expected {}", name, e, expected));
}

}  // namespace ag::detail
