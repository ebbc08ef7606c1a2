// White-box: the hazard slots that let the inline call cache run a concrete function without a
// reference count (runtime/src/function/hazard_slots.h). An entry a caller holds survives its
// removal from the cache and is freed at the next drop after the caller lets go.
#include <cstdlib>
#include <memory>
#include <string_view>

#include "function/signature_cache.h"
#include "test_util.h"

namespace {

using ag::detail::SignatureCache;
namespace hazard = ag::detail::hazard;

// Inserts an entry with key {a, b} and makes it the inline entry (through a table hit); returns
// a watch on its lifetime.
std::weak_ptr<SignatureCache::Entry> insert_inline(SignatureCache& cache, uint64_t a, uint64_t b) {
  auto e = std::make_shared<SignatureCache::Entry>();
  e->key = {a, b};
  e->hash = a * 31 + b;
  const std::weak_ptr<SignatureCache::Entry> watch = e;
  cache.insert(std::move(e));
  const uint64_t key[2] = {a, b};
  cache.find(key, 2, a * 31 + b);
  return watch;
}

auto has_key(uint64_t a, uint64_t b) {
  return [=](const uint64_t* w, size_t n) { return n == 2 && w[0] == a && w[1] == b; };
}

TEST(HazardSlots, AHeldEntryOutlivesItsRemovalUntilTheNextDropAfterRelease) {
  SignatureCache cache;
  const auto watch = insert_inline(cache, 1, 2);
  {
    hazard::SlotGuard guard;
    ASSERT_TRUE(guard);
    const SignatureCache::Entry* held = cache.find_inline(guard, has_key(1, 2));
    ASSERT_NE(held, nullptr);
    cache.remove_if([](const SignatureCache::Entry&) { return true; });  // evict() while the call runs
    EXPECT_FALSE(watch.expired());
    EXPECT_EQ(held->key[1], 2u);  // still readable by the caller
    hazard::SlotGuard nested;     // a second call on this thread takes the locked path
    EXPECT_FALSE(nested);
  }
  EXPECT_FALSE(watch.expired());  // retired: checked again at the next drop
  cache.remove_if([](const SignatureCache::Entry&) { return true; });
  EXPECT_TRUE(watch.expired());
}

TEST(HazardSlots, AnUnheldEntryIsFreedAtOnceAndLeavesTheInlineCache) {
  SignatureCache cache;
  const auto watch = insert_inline(cache, 3, 4);
  {
    hazard::SlotGuard guard;
    EXPECT_NE(cache.find_inline(guard, has_key(3, 4)), nullptr);
    EXPECT_EQ(cache.find_inline(guard, has_key(3, 5)), nullptr);  // another key misses
  }
  cache.remove_if([](const SignatureCache::Entry&) { return true; });
  EXPECT_TRUE(watch.expired());
  hazard::SlotGuard guard;
  EXPECT_EQ(cache.find_inline(guard, has_key(3, 4)), nullptr);
}

// Callers skip their fence only where membarrier(2) is registered; every Linux kernel since 4.14
// has it. A machine where this fails still runs correctly (both sides fence), only slower: the
// message says so.
TEST(HazardSlots, CallersUseTheAsymmetricFenceOnLinuxUnlessFencesAreAsked) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer builds fence on both sides on purpose";
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
  GTEST_SKIP() << "ThreadSanitizer builds fence on both sides on purpose";
#endif
#endif
#if defined(__linux__)
  if (const char* e = std::getenv("AG_HAZARD_FENCES"); e && std::string_view(e) == "1") {
    EXPECT_EQ(hazard::decide_mode(), 0) << "AG_HAZARD_FENCES=1 must make both sides fence";
    return;
  }
  EXPECT_EQ(hazard::decide_mode(), 1) << "membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) is unavailable here (seccomp?): "
                                         "cached calls fence on both sides";
#endif
}

}  // namespace
