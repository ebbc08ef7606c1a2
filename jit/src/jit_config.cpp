// See jit_config.h.
#include "jit_config.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

#include "ag/detail/profiler.h"
#include "ag/detail/streaming_stores.h"
#include "ag/error.h"
#include "ag/platform.h"

namespace ag::jit {
namespace {

std::string_view env(const char* name) {
  const char* e = std::getenv(name);
  return e ? e : "";
}

}  // namespace

JitConfig JitConfig::from_environment() {
  JitConfig c;
  if (const std::string_view opt = env("AG_JIT_OPT"); !opt.empty()) {
    const int level = std::atoi(std::string(opt).c_str());
    c.opt_level = level < 0 ? 0 : level > 3 ? 3 : level;
  }
  c.roll = env("AG_JIT_ROLL").empty() ? "auto" : std::string(env("AG_JIT_ROLL"));
  if (c.roll != "auto" && c.roll != "1" && c.roll != "0")
    throw ValueError("AG_JIT_ROLL='" + c.roll + "': expected auto, 1 or 0");
  c.vector_loops = env("AG_JIT_VECTOR_LOOPS") != "0";
  c.split_kernels = env("AG_JIT_SPLIT") != "0";
  c.share_kernels = env("AG_JIT_SHARE_KERNELS") != "0";
  c.pack_loop_weights = env("AG_JIT_PACK_WEIGHTS") != "0";
  c.pull_segments = env("AG_JIT_PULL_SEGMENTS") != "0";
  c.nontemporal = detail::nontemporal_setting();
  if (c.nontemporal < 0) c.last_level_cache_bytes = detail::last_level_cache_bytes();
  c.kernel_isa = std::string(ag::kernel_isa());
  c.test_miscompile = std::string(env("AG_JIT_TEST_MISCOMPILE"));
  c.profile = detail::profiling();
  return c;
}

bool JitConfig::rolled(int64_t loop_nests) const {
  if (roll == "auto") return loop_nests > kRolledLoopNests;
  return roll == "1";
}

bool JitConfig::streams(int64_t bytes) const { return detail::past_nontemporal_threshold(bytes, nontemporal); }

std::string JitConfig::key() const {
  return fmt::format("O{}|roll={}|vector_loops={}|split={}|pack={}|pull={}|nontemporal={}|llc={}|kernels={}{}{}", opt_level, roll,
                     vector_loops, split_kernels, pack_loop_weights, pull_segments, nontemporal, last_level_cache_bytes, kernel_isa,
                     test_miscompile.empty() ? "" : "|miscompile=" + test_miscompile, profile ? "|profile" : "");
}

}  // namespace ag::jit
