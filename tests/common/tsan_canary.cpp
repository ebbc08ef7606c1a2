// A deliberate data race, run only in the ThreadSanitizer build (./test.sh --tsan): the test
// passes when TSan reports it, so a clean --tsan run means the suite ran instrumented and any
// race in it would have been reported.
#include <cstdio>
#include <thread>

namespace {
int shared_counter = 0;  // written by two threads without synchronization, on purpose
}

int main() {
  std::thread a([] { for (int i = 0; i < 1000; ++i) ++shared_counter; });
  std::thread b([] { for (int i = 0; i < 1000; ++i) ++shared_counter; });
  a.join();
  b.join();
  std::printf("counter: %d\n", shared_counter);
  return 0;
}
