// AG_PERF_MAP=1: every function the JIT links is named in /tmp/perf-<pid>.map, the file `perf
// report` reads to name samples in code that no binary on disk holds (without it, compiled code
// shows as `[JIT] tid N` and bare addresses).
#pragma once

namespace llvm::orc {
class LLJIT;
}

namespace ag::jit {

// Adds the plugin to `jit`'s object linking layer when AG_PERF_MAP is 1 ("0" or unset: nothing);
// a ValueError names the variable for any other value.
void add_perf_map_if_asked(llvm::orc::LLJIT& jit);

}  // namespace ag::jit
