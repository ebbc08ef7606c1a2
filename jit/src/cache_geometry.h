// The machine's last-level cache, for the choice of streaming (non-temporal) stores
// (lower/lower_fused_vector.cpp). No LLVM.
#pragma once

#include <cstdint>

namespace ag::jit {

// The largest cache level's size in bytes as the kernel reports it (sysfs), read once per
// process; 8 MB if unknown. Not sysconf: glibc decodes it from cpuid, and in a VM that reports
// one 32 MB L3 it answered 320 MB.
int64_t last_level_cache_bytes();

// Whether a result of `bytes` bytes is stored around the cache: AG_JIT_NONTEMPORAL (`auto`, the
// default: from 3/4 of the last-level cache, glibc memcpy's bar for the same choice; `0`: never;
// a number: from that many bytes). Below 1 MB, `auto` answers without reading sysfs. A bad value
// is a ValueError naming it. Read at every call.
bool past_nontemporal_threshold(int64_t bytes);

}  // namespace ag::jit
