// The on-disk code cache, across processes: a second process loads the machine code instead of
// compiling; corrupted and truncated entries are reported, deleted and recompiled; concurrent
// writers leave one valid entry; AG_CACHE_DIR=off; untrusted directories; the size cap; directory
// scans only when needed; temporary files of crashed writers are swept; a directory removed while
// the process runs is created again.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../common/scoped_env.h"
#include "ag/ag.h"
#include "helper_process.h"

namespace {

namespace fs = std::filesystem;
using agtest::HelperRun;
using agtest::command;
using agtest::read_all;
using agtest::parse;
using agtest::run_helper;

class DiskCache : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() / ("agc-cache-test-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, ec);
    fs::remove_all(dir_, ec);
  }
  std::vector<fs::path> entries() const {
    std::vector<fs::path> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_, ec)) out.push_back(e.path());
    return out;
  }
  fs::path only_entry() const {
    const auto e = entries();
    EXPECT_EQ(e.size(), 1u);
    return e.empty() ? fs::path() : e[0];
  }
  std::string dir_;
};

TEST_F(DiskCache, SecondProcessLoadsMachineCodeInsteadOfCompiling) {
  const HelperRun first = run_helper(dir_);
  EXPECT_EQ(first.compiles, 1) << first.log;
  EXPECT_EQ(first.disk_hits, 0) << first.log;
  const HelperRun second = run_helper(dir_);
  EXPECT_EQ(second.compiles, 0) << second.log;
  EXPECT_EQ(second.disk_hits, 1) << second.log;
  EXPECT_EQ(second.value, first.value);
  EXPECT_EQ(only_entry().extension(), ".agcobj");
  // The directory is private to the user.
  struct stat st {};
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // Another signature is another entry.
  EXPECT_EQ(run_helper(dir_, 2).compiles, 1);
  EXPECT_EQ(entries().size(), 2u);
}

// In this process: a user clearing the cache while a program runs loses its entries, not the
// cache (the directory is created again, private, at the next store).
ag::Tensor plus_one(ag::Tensor x) { return x * 2.0f + 1.0f; }

TEST_F(DiskCache, ADirectoryRemovedWhileTheProcessRunsIsCreatedAgain) {
  if (!ag::jit_available()) GTEST_SKIP() << "no JIT";
  const agtest::ScopedEnv cache("AG_CACHE_DIR", dir_.c_str());
  auto compile = [](int64_t n) {
    auto f = ag::function(plus_one);
    (void)f(ag::ones({n}));
    return std::make_pair(f.stats().compiles, f.stats().disk_hits);
  };
  EXPECT_EQ(compile(3), std::make_pair(int64_t{1}, int64_t{0}));
  EXPECT_EQ(entries().size(), 1u);
  fs::remove_all(dir_);
  EXPECT_EQ(compile(4), std::make_pair(int64_t{1}, int64_t{0}));
  EXPECT_EQ(entries().size(), 1u) << "the store after the removal wrote nothing";
  EXPECT_EQ(compile(4), std::make_pair(int64_t{0}, int64_t{1}));
  struct stat st {};
  ASSERT_EQ(::stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(DiskCache, CorruptedEntryIsReportedDeletedAndRecompiled) {
  const HelperRun first = run_helper(dir_);
  const fs::path entry = only_entry();
  {
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(entry) / 2));
    f.put('\x5a');
    f.seekp(static_cast<std::streamoff>(fs::file_size(entry) / 2 + 1));
    f.put('\xa5');
  }
  const HelperRun second = run_helper(dir_);
  EXPECT_EQ(second.compiles, 1) << second.log;
  EXPECT_EQ(second.disk_hits, 0) << second.log;
  EXPECT_EQ(second.value, first.value);
  EXPECT_NE(second.log.find("discarding the code cache entry"), std::string::npos) << second.log;
  EXPECT_NE(second.log.find("checksum"), std::string::npos) << second.log;
  // Reported once; the recompiled entry replaced it and is good.
  const HelperRun third = run_helper(dir_);
  EXPECT_EQ(third.disk_hits, 1) << third.log;
  EXPECT_EQ(third.log.find("discarding"), std::string::npos) << third.log;
}

TEST_F(DiskCache, TruncatedEntriesAreNeverLoaded) {
  const HelperRun first = run_helper(dir_);
  for (uintmax_t size : {uintmax_t{10}, fs::file_size(only_entry()) - 7}) {
    fs::resize_file(only_entry(), size);
    const HelperRun r = run_helper(dir_);
    EXPECT_EQ(r.compiles, 1) << r.log;
    EXPECT_EQ(r.value, first.value);
    EXPECT_NE(r.log.find("truncated"), std::string::npos) << r.log;
  }
  EXPECT_EQ(run_helper(dir_).disk_hits, 1);
}

// An entry that is not this one: another function's code under this name (a copied file), and
// a file that is no agc entry at all. Each is reported, deleted and recompiled; none is run.
TEST_F(DiskCache, ForeignEntriesAreReportedAndRecompiled) {
  const HelperRun first = run_helper(dir_, 1);
  const fs::path mine = only_entry();
  const fs::path other_dir = dir_ + "-other";
  fs::remove_all(other_dir);
  run_helper(other_dir.string(), 2);
  fs::path theirs;
  for (const auto& e : fs::directory_iterator(other_dir)) theirs = e.path();
  ASSERT_FALSE(theirs.empty());
  fs::copy_file(theirs, mine, fs::copy_options::overwrite_existing);
  fs::remove_all(other_dir);
  const HelperRun copied = run_helper(dir_, 1);
  EXPECT_EQ(copied.compiles, 1) << copied.log;
  EXPECT_EQ(copied.value, first.value);
  EXPECT_NE(copied.log.find("its key does not match its name"), std::string::npos) << copied.log;
  std::ofstream(mine, std::ios::binary | std::ios::trunc) << std::string(4096, 'x');
  const HelperRun junk = run_helper(dir_, 1);
  EXPECT_EQ(junk.compiles, 1) << junk.log;
  EXPECT_EQ(junk.value, first.value);
  EXPECT_NE(junk.log.find("not an agc cache entry"), std::string::npos) << junk.log;
  EXPECT_EQ(run_helper(dir_, 1).disk_hits, 1);  // the recompiled entry is good
}

TEST_F(DiskCache, ConcurrentWritersLeaveOneValidEntry) {
  constexpr int kWriters = 4;
  std::vector<FILE*> procs;
  for (int i = 0; i < kWriters; ++i) procs.push_back(::popen(command(dir_, 3, "", 1).c_str(), "r"));
  std::vector<HelperRun> runs;
  for (FILE* p : procs) {
    ASSERT_NE(p, nullptr);
    runs.push_back(parse(read_all(p)));
    ::pclose(p);
  }
  for (const HelperRun& r : runs) {
    EXPECT_EQ(r.compiles + r.disk_hits, 1) << r.log;
    EXPECT_EQ(r.value, runs[0].value);
    EXPECT_EQ(r.log.find("discarding"), std::string::npos) << r.log;
  }
  EXPECT_EQ(only_entry().extension(), ".agcobj");  // no temporary files left behind
  EXPECT_EQ(run_helper(dir_, 3).disk_hits, 1);
}

TEST_F(DiskCache, OffDisablesIt) {
  for (int i = 0; i < 2; ++i) {
    const HelperRun r = run_helper("off");
    EXPECT_EQ(r.compiles, 1) << r.log;
    EXPECT_EQ(r.disk_hits, 0) << r.log;
  }
}

TEST_F(DiskCache, UntrustedDirectoryIsSkippedWithOneWarning) {
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::all);  // 0777: others could plant code
  const HelperRun r = run_helper(dir_);
  EXPECT_EQ(r.compiles, 1) << r.log;
  EXPECT_NE(r.log.find("not using the code cache directory"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("other users can write"), std::string::npos) << r.log;
  EXPECT_TRUE(entries().empty());
}

TEST_F(DiskCache, SizeCapEvictsLeastRecentlyUsedEntries) {
  run_helper(dir_, 1);
  const double entry_bytes = static_cast<double>(fs::file_size(only_entry()));
  // Room for about three entries; the size varies a little with the signature.
  const std::string cap = "AG_CACHE_MAX_MB=" + std::to_string(entry_bytes * 3.6 / 1048576.0);
  for (int v = 2; v <= 6; ++v) ASSERT_EQ(run_helper(dir_, v, cap).compiles, 1);
  const auto left = entries();
  EXPECT_LE(left.size(), 3u);
  EXPECT_GE(left.size(), 1u);
  EXPECT_EQ(run_helper(dir_, 6, cap).disk_hits, 1);  // the newest survived
  EXPECT_EQ(run_helper(dir_, 1, cap).compiles, 1);   // the oldest was evicted
}

// A process scans the cache directory at its first store, then only when its stores push the
// estimated total over the cap: not once per store.
TEST_F(DiskCache, StoresScanTheDirectoryOnlyWhenTheEstimateGoesOverTheCap) {
  const HelperRun r = run_helper(dir_, 1, "AG_LOG=compile", 5);
  EXPECT_EQ(r.compiles, 5) << r.log;
  EXPECT_EQ(entries().size(), 5u);
  size_t scans = 0;
  for (size_t at = r.log.find("disk cache: scanned"); at != std::string::npos; at = r.log.find("disk cache: scanned", at + 1))
    ++scans;
  EXPECT_EQ(scans, 1u) << r.log;

  // With room for about two entries, the scans that trim come back. (Entries differ in size with
  // the function and the CPU level: sized by the largest, a trim always keeps one.)
  double entry_bytes = 0;
  for (const auto& e : entries()) entry_bytes = std::max(entry_bytes, static_cast<double>(fs::file_size(e)));
  const std::string cap = "AG_CACHE_MAX_MB=" + std::to_string(entry_bytes * 2.6 / 1048576.0);
  const HelperRun capped = run_helper(dir_, 10, "AG_LOG=compile " + cap, 4);
  EXPECT_EQ(capped.compiles, 4) << capped.log;
  EXPECT_LE(entries().size(), 3u);
  EXPECT_GE(entries().size(), 1u);
}

// Temporary files of writers that died before renaming are deleted once they are old; a fresh
// one (a writer at work) is left alone.
TEST_F(DiskCache, StaleTemporaryFilesOfCrashedWritersAreSwept) {
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::replace);
  const fs::path stale = fs::path(dir_) / ".0123abcd.99999.1.0.tmp";
  const fs::path fresh = fs::path(dir_) / ".4567ef01.99999.1.1.tmp";
  std::ofstream(stale) << "half an object";
  std::ofstream(fresh) << "being written";
  fs::last_write_time(stale, fs::file_time_type::clock::now() - std::chrono::hours(1));
  EXPECT_EQ(run_helper(dir_).compiles, 1);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(fresh));
}

TEST_F(DiskCache, DumpWritesLlvmIrAndAssembly) {
  const std::string dump = dir_ + "-dump";
  fs::create_directories(dump);
  const HelperRun r = run_helper("off", 1, "AG_DUMP='" + dump + "'");
  EXPECT_EQ(r.compiles, 1) << r.log;
  int ll = 0, opt = 0, s = 0;
  for (const auto& e : fs::directory_iterator(dump)) {
    const std::string name = e.path().filename().string();
    std::ifstream in(e.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (name.ends_with(".opt.ll")) opt += text.find("@agc_entry(") != std::string::npos;
    else if (name.ends_with(".ll")) ll += text.find("define i32 @agc_entry") != std::string::npos;
    else if (name.ends_with(".s")) s += text.find("agc_entry:") != std::string::npos;
  }
  EXPECT_EQ(ll, 1);
  EXPECT_EQ(opt, 1);
  EXPECT_EQ(s, 1);
  fs::remove_all(dump);
}

}  // namespace
