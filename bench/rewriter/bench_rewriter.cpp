// Benchmark: rewriting a translation unit with ag-rewrite vs a plain `clang++-19 -fsyntax-only`
// of the same unit, side by side (CPU time of the child processes, and wall time), with the
// ratio. The target is a ratio of at most 1.3.
//   bench_rewriter [runs]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <utility>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

struct Timing {
  double cpu = 0, wall = 0;  // seconds
};

double childCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

// Runs `argv` once with stdout discarded; exits on failure (a benchmark of a failing command
// would measure nothing).
Timing runOnce(const std::vector<std::string>& argv) {
  const double cpu_before = childCpuSeconds();
  const auto start = std::chrono::steady_clock::now();
  std::fflush(stdout);  // or the child's freopen would print our buffered table again
  const pid_t pid = fork();
  if (pid == 0) {
    if (!std::freopen("/dev/null", "w", stdout)) _exit(127);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench_rewriter: '%s' failed\n", argv[0].c_str());
    std::exit(1);
  }
  const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - start;
  return {childCpuSeconds() - cpu_before, wall.count()};
}

// The best of `runs` runs of each command, alternating between them so that both see the same
// machine load (one warm-up run of each first, to fill the page cache). The minimum is the
// estimate least disturbed by other processes on a shared machine.
std::pair<Timing, Timing> bestOfAlternating(const std::vector<std::string>& a, const std::vector<std::string>& b,
                                            int runs) {
  runOnce(a);
  runOnce(b);
  Timing best_a{1e9, 1e9}, best_b{1e9, 1e9};
  for (int i = 0; i < runs; ++i) {
    for (auto [argv, best] : {std::pair{&a, &best_a}, std::pair{&b, &best_b}}) {
      const Timing t = runOnce(*argv);
      best->cpu = std::min(best->cpu, t.cpu);
      best->wall = std::min(best->wall, t.wall);
    }
  }
  return {best_a, best_b};
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  const std::vector<std::string> flags = {"-std=c++20", "-I" AG_BENCH_RUNTIME_INCLUDE, "-I" AG_BENCH_HARNESS_INCLUDE,
                                          "-I" AG_BENCH_EIGEN_INCLUDE};
  const std::vector<std::pair<const char*, const char*>> units = {
      {"loops.cpp (ag.h + <vector>...)", AG_BENCH_CORPUS_DIR "/loops.cpp"},
      {"jumps.cpp (ag.h, many returns)", AG_BENCH_CORPUS_DIR "/jumps.cpp"},
      {"robust.cpp (Eigen + 20 std headers)", AG_BENCH_CORPUS_DIR "/robust.cpp"},
  };
  std::printf("%-38s %22s %22s %8s %8s\n", "translation unit", "clang++ -fsyntax-only", "ag-rewrite", "ratio", "target");
  std::printf("%-38s %10s %11s %10s %11s %8s\n", "", "cpu s", "wall s", "cpu s", "wall s", "(cpu)");
  bool within = true;
  for (const auto& [label, file] : units) {
    std::vector<std::string> syntax = {AG_BENCH_CLANG, "-fsyntax-only", file};
    syntax.insert(syntax.end(), flags.begin(), flags.end());
    std::vector<std::string> rewrite = {AG_BENCH_AG_REWRITE, file, "--"};
    rewrite.insert(rewrite.end(), flags.begin(), flags.end());
    const auto [base, ours] = bestOfAlternating(syntax, rewrite, runs);
    const double ratio = ours.cpu / base.cpu;
    within = within && ratio <= 1.3;
    std::printf("%-38s %10.3f %11.3f %10.3f %11.3f %7.2fx %8s\n", label, base.cpu, base.wall, ours.cpu, ours.wall, ratio,
                ratio <= 1.3 ? "<= 1.3" : "MISSED");
  }
  std::printf("best of %d alternating runs each, after one warm-up run of each\n", runs);
  return within ? 0 : 1;
}
