// Streaming (non-temporal) stores: when a result is large enough to be written around the
// cache, for compiled vector loops (jit/src/lower/lower_fused_vector.cpp) and for eager
// elementwise kernels (src/ops/isa/elementwise_parallel.cpp). docs/jit.md, "Streaming stores".
#pragma once

#include <cstdint>

namespace ag::detail {

// The largest cache level's size in bytes as the kernel reports it (sysfs), read once per
// process; 8 MB if unknown. Not sysconf: glibc decodes it from cpuid, and in a VM that reports
// one 32 MB L3 it answered 320 MB.
int64_t last_level_cache_bytes();

// AG_NONTEMPORAL (or its older name AG_JIT_NONTEMPORAL): -1 for `auto` (the default: from 3/4
// of the last-level cache, glibc memcpy's bar for the same choice), 0 for never, else the bar
// in bytes. A bad value is a ValueError naming it. Read at every call.
int64_t nontemporal_setting();

// Whether a result of `bytes` bytes is stored around the cache under `setting`
// (nontemporal_setting(); the JIT passes the one its compile read). Below 1 MB, `auto` answers
// without reading sysfs.
bool past_nontemporal_threshold(int64_t bytes, int64_t setting);
inline bool past_nontemporal_threshold(int64_t bytes) { return past_nontemporal_threshold(bytes, nontemporal_setting()); }

// Eager elementwise ops that wrote their result with streaming stores since the process
// started (tests check that the streaming path ran).
void note_streamed_eager_op();
int64_t streamed_eager_ops();

}  // namespace ag::detail
