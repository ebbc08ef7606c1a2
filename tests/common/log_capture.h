// Captures the process's log lines of some topics while alive (AG_LOG for one scope): tests
// check that a path ran by the line it logs.
#pragma once

#include <ag/ag.h>

#include <mutex>
#include <string>

#include "ag/detail/log.h"

namespace agtest {

class LogCapture {
 public:
  explicit LogCapture(ag::detail::LogTopic topic) {
    ag::detail::set_log_topics(static_cast<unsigned>(topic));
    ag::set_log_sink([this](std::string_view line) {
      const std::lock_guard lock(mu_);
      text_ += std::string(line);
    });
  }
  ~LogCapture() {
    ag::set_log_sink(nullptr);
    ag::detail::set_log_topics(0);
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  // Every line so far, each ending in a newline.
  std::string text() const {
    const std::lock_guard lock(mu_);
    return text_;
  }

 private:
  mutable std::mutex mu_;
  std::string text_;
};

}  // namespace agtest
