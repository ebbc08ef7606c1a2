// ag::state(...): the variables a converted construct may modify, passed by reference.
#pragma once

#include <tuple>

namespace ag {

template <class... Ts>
std::tuple<Ts&...> state(Ts&... vars) {
  return std::tuple<Ts&...>(vars...);
}

}  // namespace ag
