// expect_error<E>(f, {parts...}): `f` throws E whose message contains each part (the names, the
// values, the caller's file:line a user needs), for tests of what an error says.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace agtest {

template <class E, class F>
void expect_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const E& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

}  // namespace agtest
