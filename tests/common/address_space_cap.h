// Makes huge allocations fail whatever the machine's overcommit policy: caps this process's
// address space (the soft limit, restored when the cap goes out of scope, since some ctest
// runs execute every test of a binary in one process). Under AddressSanitizer or
// ThreadSanitizer, whose shadow mappings already exceed any cap, nothing is capped: there the
// sanitizer's allocator refuses a 4 TiB allocation.
#pragma once

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdint>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define AGTEST_SANITIZER_SHADOW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define AGTEST_SANITIZER_SHADOW 1
#endif
#endif
#ifndef AGTEST_SANITIZER_SHADOW
#define AGTEST_SANITIZER_SHADOW 0
#endif

namespace agtest {

// A float32 [2^20, 2^20] tensor: 4 TiB, more than any machine here can map, and how the
// out-of-memory messages name it.
inline constexpr int64_t kMi = int64_t{1} << 20;
inline constexpr const char* kHugeShape = "[1048576,1048576]";
inline constexpr const char* kHugeBytes = "4398046511104 bytes, 4.0 TiB";

class AddressSpaceCap {
 public:
  AddressSpaceCap() {
#if !AGTEST_SANITIZER_SHADOW
    EXPECT_EQ(::getrlimit(RLIMIT_AS, &saved_), 0);
    rlimit cap = saved_;
    cap.rlim_cur = std::min<rlim_t>(saved_.rlim_cur, rlim_t{64} << 30);  // far below the 4 TiB the tests ask for
    EXPECT_EQ(::setrlimit(RLIMIT_AS, &cap), 0);
#endif
  }
  ~AddressSpaceCap() {
#if !AGTEST_SANITIZER_SHADOW
    ::setrlimit(RLIMIT_AS, &saved_);
#endif
  }
  AddressSpaceCap(const AddressSpaceCap&) = delete;
  AddressSpaceCap& operator=(const AddressSpaceCap&) = delete;

 private:
  rlimit saved_{};
};

}  // namespace agtest
