// Disk cache entries: header (magic, key, size, checksum) + object bytes.
#include "disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <memory>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "ag/detail/log.h"

namespace ag::jit {
namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'A', 'G', 'C', 'O', 'B', 'J', '1', '\n'};
constexpr const char* kSuffix = ".agcobj";
constexpr auto kStaleTemporary = std::chrono::minutes(10);

struct Header {
  char magic[8];
  uint64_t key_lo, key_hi;
  uint64_t size;
  uint64_t checksum;
};

std::string configured_dir() {
  if (const char* e = std::getenv("AG_CACHE_DIR"); e && *e) return e;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/agc";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/agc";
  return "off";
}

uint64_t configured_max_bytes() {
  const char* e = std::getenv("AG_CACHE_MAX_MB");
  const double mb = e ? std::strtod(e, nullptr) : 512.0;  // fractions allowed (tests use a few KB)
  return static_cast<uint64_t>(std::max(mb, 0.001) * 1048576.0);
}

// Empty when the directory can be trusted, else why not. Creates it (0700) when missing.
std::string trust_problem(const std::string& dir) {
  std::error_code ec;
  const fs::path p(dir);
  if (!fs::exists(p, ec)) {
    if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return fmt::format("cannot create it ({})", std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return fmt::format("cannot stat it ({})", std::strerror(errno));
  if (!S_ISDIR(st.st_mode)) return "it is not a directory";
  if (st.st_uid != ::geteuid()) return "it belongs to another user";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "other users can write to it";
  return {};
}

}  // namespace

DiskCache* DiskCache::current() {
  // One instance per directory, never freed: a compile on another thread may still use the
  // pointer it got before AG_CACHE_DIR changed. Their number is bounded by the directories used.
  static std::mutex mu;
  static auto* caches = new std::map<std::string, std::unique_ptr<DiskCache>>;
  static auto* warned = new std::set<std::string>;
  const std::string dir = configured_dir();
  if (dir == "off") return nullptr;
  std::lock_guard lock(mu);
  auto it = caches->find(dir);
  if (it != caches->end()) return it->second.get();  // null: not trusted (warned once)
  std::unique_ptr<DiskCache> cache;
  const std::string problem = trust_problem(dir);
  if (problem.empty()) cache.reset(new DiskCache(dir, configured_max_bytes()));
  else if (warned->insert(dir).second)
    detail::log_line(fmt::format("agc: warning: not using the code cache directory '{}': {}", dir, problem));
  return caches->emplace(dir, std::move(cache)).first->second.get();
}

std::string DiskCache::path_of(const CacheKey& key) const { return dir_ + "/" + key.hex() + kSuffix; }

void DiskCache::report_once(const std::string& path, const std::string& why) {
  std::lock_guard lock(mu_);
  if (reported_.insert(path).second)
    detail::log_line(fmt::format("agc: warning: discarding the code cache entry '{}': {}; recompiling", path, why));
}

std::optional<std::string> DiskCache::load(const CacheKey& key) {
  const std::string path = path_of(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  in.close();
  std::string problem;
  Header h{};
  if (bytes.size() < sizeof(Header)) {
    problem = "it is truncated";
  } else {
    std::memcpy(&h, bytes.data(), sizeof h);
    const std::string_view payload(bytes.data() + sizeof h, bytes.size() - sizeof h);
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) problem = "it is not an agc cache entry";
    else if (h.key_lo != key.lo || h.key_hi != key.hi) problem = "its key does not match its name";
    else if (h.size != payload.size()) problem = payload.size() < h.size ? "it is truncated" : "it has trailing bytes";
    else if (hash_bytes(payload, 3) != h.checksum) problem = "its checksum does not match (corrupted)";
  }
  if (!problem.empty()) {
    report_once(path, problem);
    ::unlink(path.c_str());
    return std::nullopt;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // least-recently-used order follows mtime
  return bytes.substr(sizeof(Header));
}

void DiskCache::discard(const CacheKey& key, const std::string& why) {
  const std::string path = path_of(key);
  report_once(path, why);
  ::unlink(path.c_str());
}

void DiskCache::store(const CacheKey& key, std::string_view object) {
  if (object.empty()) return;
  static std::atomic<uint64_t> counter{0};
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.key_lo = key.lo;
  h.key_hi = key.hi;
  h.size = object.size();
  h.checksum = hash_bytes(object, 3);
  const std::string path = path_of(key);
  const std::string tmp = fmt::format("{}/.{}.{}.{}.{}.tmp", dir_, key.hex(), ::getpid(),
                                      std::hash<std::thread::id>{}(std::this_thread::get_id()), counter.fetch_add(1));
  {
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    // The directory removed while the process runs (a user clearing the cache): created again,
    // and checked as at first, rather than no store succeeding until the process restarts.
    if (fd < 0 && errno == ENOENT && trust_problem(dir_).empty())
      fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) return;  // a read-only or full cache only costs the next process a compile
    bool ok = ::write(fd, &h, sizeof h) == static_cast<ssize_t>(sizeof h) &&
              ::write(fd, object.data(), object.size()) == static_cast<ssize_t>(object.size());
    ok = ::close(fd) == 0 && ok;
    if (!ok) {
      ::unlink(tmp.c_str());
      return;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return;
  }
  // The directory is scanned at this process's first store (which also sweeps temporary files
  // that crashed writers left), then only when the running estimate goes over the cap: a
  // store costs no directory scan in the common case. Other processes' stores are counted at
  // the next scan (the cap is kept per process, approximately across processes).
  std::lock_guard lock(mu_);
  estimated_bytes_ += sizeof h + object.size();
  if (!scanned_ || estimated_bytes_ > max_bytes_) trim();
}

void DiskCache::trim() {
  struct Entry {
    fs::path path;
    uint64_t bytes;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  int stale = 0, removed = 0;
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (const auto& de : fs::directory_iterator(dir_, ec)) {
    std::error_code e1, e2;
    const auto when = de.last_write_time(e2);
    if (e2) continue;
    if (de.path().extension() == ".tmp") {
      // A writer renames its temporary file within milliseconds; one this old was left by a
      // process that died while writing.
      if (now - when > kStaleTemporary && fs::remove(de.path(), e1)) ++stale;
      continue;
    }
    if (de.path().extension() != kSuffix) continue;
    const uint64_t size = de.file_size(e1);
    if (e1) continue;
    entries.push_back({de.path(), size, when});
    total += size;
  }
  if (total > max_bytes_) {
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
    const uint64_t target = max_bytes_ / 10 * 8;
    for (const Entry& e : entries) {
      if (total <= target) break;
      fs::remove(e.path, ec);
      total -= e.bytes;
      ++removed;
    }
  }
  scanned_ = true;
  estimated_bytes_ = total;
  if (detail::log_enabled(detail::LogTopic::Compile))
    detail::log_line(fmt::format("agc: jit: disk cache: scanned {}: {} bytes in {} entries after removing {} least "
                                 "recently used and {} stale temporary files",
                                 dir_, total, entries.size() - static_cast<size_t>(removed), removed, stale));
}

}  // namespace ag::jit
