// The last-level cache size and the streaming-store bar (ag/detail/streaming_stores.h).
#include "ag/detail/streaming_stores.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "ag/error.h"

namespace ag::detail {

int64_t last_level_cache_bytes() {
  static const int64_t cached = [] {
    int level = 0;
    int64_t bytes = 0;
    for (int index = 0; index < 16; ++index) {
      const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
      std::ifstream level_file(dir + "level"), size_file(dir + "size");
      if (!level_file || !size_file) break;  // index0, index1, ... end at the first one missing
      int l = 0;
      int64_t size = 0;
      char unit = 0;  // "32768K"
      if (!(level_file >> l) || !(size_file >> size >> unit)) continue;
      size <<= unit == 'M' ? 20 : unit == 'K' ? 10 : 0;
      if (l > level) level = l, bytes = 0;
      if (l == level) bytes = std::max(bytes, size);
    }
    return bytes > 0 ? bytes : int64_t{8} << 20;
  }();
  return cached;
}

int64_t nontemporal_setting() {
  const char* name = "AG_NONTEMPORAL";
  const char* e = std::getenv(name);
  if (!e || !*e) e = std::getenv(name = "AG_JIT_NONTEMPORAL");  // its name until eager kernels streamed too
  if (!e || !*e || std::string_view(e) == "auto") return -1;
  char* end = nullptr;
  const long long bar = std::strtoll(e, &end, 10);
  if (*end != '\0' || bar < 0) throw ValueError(std::string(name) + "='" + e + "': expected auto, 0 or a size in bytes");
  return bar;
}

bool past_nontemporal_threshold(int64_t bytes, int64_t setting) {
  if (setting >= 0) return setting > 0 && bytes >= setting;
  if (bytes < (int64_t{1} << 20)) return false;  // no last-level cache is that small
  return bytes >= last_level_cache_bytes() / 4 * 3;
}

namespace {
std::atomic<int64_t> g_streamed_eager_ops{0};
}  // namespace

void note_streamed_eager_op() { g_streamed_eager_ops.fetch_add(1, std::memory_order_relaxed); }
int64_t streamed_eager_ops() { return g_streamed_eager_ops.load(std::memory_order_relaxed); }

}  // namespace ag::detail
