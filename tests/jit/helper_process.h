// Runs tests/jit/cache_helper.cpp in a new process (disk-cache and warm-up tests) and parses
// what it prints: its stats, its result and its whole output (the log).
#pragma once

#include <cstdio>
#include <string>

namespace agtest {

struct HelperRun {
  int compiles = -1, disk_hits = -1;
  std::string value, log;
};

inline HelperRun parse(const std::string& out) {
  HelperRun r;
  r.log = out;
  const size_t at = out.find("compiles=");
  if (at == std::string::npos) return r;
  char value[64] = {};
  std::sscanf(out.c_str() + at, "compiles=%d disk_hits=%d value=%63s", &r.compiles, &r.disk_hits, value);
  r.value = value;
  return r;
}

// The helper's command line: AG_CACHE_DIR=dir, more environment in `env`; `wait` is its third
// argument ("" none, milliseconds between creating and calling the function, or "exit").
inline std::string command(const std::string& dir, int variant, const std::string& env, int signatures,
                           const std::string& wait = "") {
  return "AG_CACHE_DIR='" + dir + "' " + env + " '" AG_CACHE_HELPER "' " + std::to_string(variant) + " " +
         std::to_string(signatures) + (wait.empty() ? "" : " " + wait) + " 2>&1";
}

inline std::string read_all(FILE* p) {
  std::string out;
  char buf[512];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  return out;
}

inline HelperRun run_helper(const std::string& dir, int variant = 1, const std::string& env = "", int signatures = 1,
                            const std::string& wait = "") {
  FILE* p = ::popen(command(dir, variant, env, signatures, wait).c_str(), "r");
  if (!p) return {};
  const std::string out = read_all(p);
  ::pclose(p);
  return parse(out);
}

}  // namespace agtest
