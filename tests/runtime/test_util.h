// Helpers shared by the runtime tests: capturing prints and logs, checking error messages.
#pragma once

#include <ag/ag.h>
#include <ag/detail/log.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

namespace agtest {

// Captures every ag::print line while alive.
class PrintCapture {
 public:
  PrintCapture() {
    ag::set_print_sink([this](std::string_view s) {
      std::lock_guard lock(mu_);
      lines_.emplace_back(s);
    });
  }
  ~PrintCapture() { ag::set_print_sink(nullptr); }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  std::string text() const {
    std::string t;
    for (const auto& l : lines()) t += l;
    return t;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// Captures warnings and AG_LOG lines while alive; optionally enables log topics.
class LogCapture {
 public:
  explicit LogCapture(unsigned topics = 0) {
    ag::detail::set_log_topics(topics);
    ag::set_log_sink([this](std::string_view s) {
      std::lock_guard lock(mu_);
      lines_.emplace_back(s);
    });
  }
  ~LogCapture() {
    ag::set_log_sink(nullptr);
    ag::detail::set_log_topics(0);
  }
  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  size_t count_containing(const std::string& needle) const {
    size_t n = 0;
    for (const auto& l : lines()) n += l.find(needle) != std::string::npos;
    return n;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

// Runs f, expects an exception of type E whose message contains every needle.
template <class E, class F>
void expect_error(F&& f, std::initializer_list<std::string> needles) {
  try {
    f();
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& n : needles) EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected " << typeid(E).name() << ", got " << typeid(e).name() << ": " << e.what();
    return;
  }
  ADD_FAILURE() << "expected an exception of type " << typeid(E).name();
}

inline std::vector<int64_t> ints(const ag::Tensor& t) { return t.to_vector<int64_t>(); }
inline std::vector<double> doubles(const ag::Tensor& t) { return t.to_vector<double>(); }

inline ag::FunctionOptions interpreted() {
  ag::FunctionOptions o;
  o.jit_compile = false;
  return o;
}

}  // namespace agtest
