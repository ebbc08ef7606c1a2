// Holds the background compiler before each compile until open() is called (through
// detail::set_background_compile_gate), so that a test's "while the compile is pending" phase
// is certain, not a race it hopes to win. The destructor opens, waits for the queue to drain
// and removes the gate.
#pragma once

#include <condition_variable>
#include <mutex>

#include "function/background_compiler.h"

namespace agtest {

class CompileHold {
 public:
  CompileHold() {
    ag::detail::set_background_compile_gate([this] {
      std::unique_lock lock(mu_);
      ++waiting_;
      changed_.notify_all();
      changed_.wait(lock, [&] { return open_; });
    });
  }
  ~CompileHold() {
    open();
    ag::detail::wait_for_background_compiles();
    ag::detail::set_background_compile_gate(nullptr);
  }
  CompileHold(const CompileHold&) = delete;
  CompileHold& operator=(const CompileHold&) = delete;

  // Until the compiler waits at the gate (with a compile taken from its queue).
  void wait_until_held() {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [&] { return waiting_ > 0; });
  }
  void open() {
    std::lock_guard lock(mu_);
    open_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  int waiting_ = 0;
  bool open_ = false;
};

}  // namespace agtest
