// SpinMutex: the lock of a Variable's state. Its critical sections are one read-modify-write of
// the value (W7: a staged loop of assign_add takes it a million times), so the uncontended path
// matters most: one locked exchange to take it and a plain release store to drop it, where
// std::mutex takes two locked instructions in any process that has ever started a second
// thread (glibc elides them only while a process is single-threaded). Waiters spin briefly and
// then yield, so a long critical section (assigning a large value) does not burn a core.
#pragma once

#include <atomic>
#include <thread>

namespace ag::detail {

class SpinMutex {
 public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < 64) pause();
        else std::this_thread::yield();
      }
    }
  }
  bool try_lock() {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::atomic<bool> locked_{false};
};

}  // namespace ag::detail
