// W4's rows: the cached call of x + 1 against a direct C++ call, the same call in a process
// without membarrier (AG_HAZARD_FENCES=1), and the Executable alone (no signature lookup).
#include "dispatch_rows.h"

#include <cstdio>
#include <memory>

#include "ag/ag.h"
#include "ag/backend.h"
#include "baselines.h"
#include "table.h"
#include "workloads.h"

namespace bench {

using namespace table;

namespace {

// The same x + 1 graph built by hand and run through the JIT's Executable directly: the compiled
// code plus output allocation, without the runtime's signature lookup.
double executable_only(int reps) {
  auto g = std::make_shared<ag::Graph>();
  const ag::TensorType t{ag::float32, ag::Shape{1}};
  const ag::ValueId x = g->add_param(t);
  ag::Node one;
  one.op = ag::OpKind::Const;
  one.attrs.value = ag::constant({1.0f});
  one.outputs = {t};
  const ag::ValueId c = g->add(one);
  ag::Node add;
  add.op = ag::OpKind::Add;
  add.inputs = {x, c};
  add.outputs = {t};
  g->results = {g->add(add)};
  auto exe = ag::compiler_backend()->compile(g, {.name = "w4_graph", .dump_prefix = {}});
  const ag::Tensor in[1] = {ag::constant({1.0f})};
  ag::Tensor out[1];
  return time_ns([&] { exe->run(in, out); keep(out[0]); }, 200000, reps);
}

// The same cached call in a new process with fences on both sides of the hazard slots
// (AG_HAZARD_FENCES=1): what a process without membarrier (a seccomp filter that denies it, an
// old kernel) pays. `self --w4-call` prints the time.
double w4_fenced(const std::string& self, int reps) {
  const std::string cmd = "AG_HAZARD_FENCES=1 AG_CACHE_DIR=off '" + self + "' --w4-call " + std::to_string(reps);
  double ns = -1;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    if (std::fscanf(p, "%lf", &ns) != 1) ns = -1;
    ::pclose(p);
  }
  return ns;
}

}  // namespace

double w4_cached_call(int reps) {
  auto jit = ag::function(bench::trivial);
  const ag::Tensor x = ag::constant({1.0f});
  return time_ns([&] { keep(jit(x)); }, 200000, reps);
}

void dispatch_rows(const std::string& self, int reps) {
  volatile float v = 1.0f;
  const double t_jit = w4_cached_call(reps);
  const double t_fenced = w4_fenced(self, reps);
  const double t_exe = executable_only(reps);
  const double t_direct = time_ns([&] { keep(bench::add_one(v)); }, 2000000, reps);
  const char* w = "W4 dispatch: cached call, x + 1 on a 1-element tensor";
  char extra[64];
  std::snprintf(extra, sizeof extra, "%.0f ns above direct", t_jit - t_direct);
  row(w, "JIT (ag::function)", t_jit, extra, "<= +30 ns: " + verdict(t_jit - t_direct <= 30));
  std::snprintf(extra, sizeof extra, "%.0f ns above direct", t_fenced - t_direct);
  row(w, "same without membarrier (AG_HAZARD_FENCES=1: a fence on both sides)", t_fenced, extra,
      "<= +30 ns: " + verdict(t_fenced > 0 && t_fenced - t_direct <= 30));
  row(w, "of which JIT Executable::run (code + output tensor)", t_exe);
  row(w, "direct C++ call (noinline)", t_direct);
}

}  // namespace bench
