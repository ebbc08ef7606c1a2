// AG_PERF_MAP=1 (perf_map.cpp): run with it set, this program compiles a Function with a loop
// nest large enough for the pool and calls it; then every line its JIT wrote to
// /tmp/perf-<pid>.map must name an address range of executable memory of this process (its
// /proc/self/maps), and the concrete function's entry and parallel worker must be among them.
// Prints "ok" and exits 0, or prints what is wrong and exits 1 (2 for an agc error: its message).
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ag/ag.h"

namespace {

struct Range {
  uint64_t begin = 0, end = 0;
};

// The executable mappings of this process.
std::vector<Range> executable_ranges() {
  std::vector<Range> out;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    Range r;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%" SCNx64 "-%" SCNx64 " %4s", &r.begin, &r.end, perms) == 3 && perms[2] == 'x') out.push_back(r);
  }
  return out;
}

}  // namespace

int main() try {
  auto f = ag::function([](ag::Tensor x) { return ag::tanh(x) * 2.f + 1.f; }, {.name = "perf_map_check"});
  const ag::Tensor x = ag::random_uniform({1 << 18}, ag::float32, -1, 1, 1);
  f(x);
  const std::string path = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
  std::ifstream map(path);
  if (!map) {
    std::printf("FAILED: no %s\n", path.c_str());
    return 1;
  }
  const std::vector<Range> code = executable_ranges();
  bool entry = false, worker = false;
  int lines = 0;
  for (std::string line; std::getline(map, line); ++lines) {
    uint64_t start = 0, size = 0;
    char name[512] = {};
    if (std::sscanf(line.c_str(), "%" SCNx64 " %" SCNx64 " %511s", &start, &size, name) != 3 || size == 0) {
      std::printf("FAILED: malformed line '%s'\n", line.c_str());
      return 1;
    }
    bool inside = false;
    for (const Range& r : code) inside |= start >= r.begin && start + size <= r.end;
    if (!inside) {
      std::printf("FAILED: '%s' is not in executable memory\n", line.c_str());
      return 1;
    }
    const std::string n = name;
    entry |= n.find("perf_map_check") != std::string::npos && n.find(":agc_entry") != std::string::npos;
    worker |= n.find("perf_map_check") != std::string::npos && n.find("agc_parallel_loop") != std::string::npos;
  }
  std::remove(path.c_str());
  if (!entry || !worker) {
    std::printf("FAILED: %d lines, the entry %s, the parallel worker %s\n", lines, entry ? "named" : "missing",
                worker ? "named" : "missing");
    return 1;
  }
  std::printf("ok: %d functions named\n", lines);
  return 0;
} catch (const ag::Error& e) {  // AG_PERF_MAP=yes: the test expects the message
  std::printf("error: %s\n", e.what());
  return 2;
}
