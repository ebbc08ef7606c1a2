// The on-disk object cache (AG_CACHE_DIR; default $XDG_CACHE_HOME/agc, else ~/.cache/agc; "off"
// disables it). Entries are written atomically (temp file + rename) with a checksum; a truncated
// or corrupted entry is reported once, deleted and never loaded. The directory is created 0700
// and used only if it belongs to the user and others cannot write it. A size cap
// (AG_CACHE_MAX_MB, default 512, fractions allowed) is kept by deleting the least recently used entries;
// temporary files of crashed writers are swept. No LLVM.
#pragma once

#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "graph_key.h"

namespace ag::jit {

class DiskCache {
 public:
  // The cache for the current AG_CACHE_DIR, or null when it is off or not trusted (warned once).
  // Never freed: valid for the life of the process, even after AG_CACHE_DIR changes.
  static DiskCache* current();

  // The object stored under `key`, verified; nullopt on a miss or a bad entry.
  std::optional<std::string> load(const CacheKey& key);
  void store(const CacheKey& key, std::string_view object);
  // Deletes an entry that verified but could not be used, reporting it once.
  void discard(const CacheKey& key, const std::string& why);

  const std::string& dir() const { return dir_; }

 private:
  DiskCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  std::string path_of(const CacheKey& key) const;
  void report_once(const std::string& path, const std::string& why);
  // Under mu_: scans the directory, deletes least recently used entries down to 80% of the
  // cap when over it and temporary files of crashed writers; resets the estimate.
  void trim();

  const std::string dir_;
  const uint64_t max_bytes_;
  std::mutex mu_;
  std::set<std::string> reported_;
  bool scanned_ = false;         // under mu_
  uint64_t estimated_bytes_ = 0;  // under mu_: the last scan's total plus what was stored since
};

}  // namespace ag::jit
