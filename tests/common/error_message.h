// The message of the ag::Error that `f` throws, or "no error": for tests that check what an
// error says (its names, the line), not only its type.
#pragma once

#include <string>

#include "ag/error.h"

namespace agtest {

template <class F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const ag::Error& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace agtest
