// Runs every registered program four ways against its reference (see fuzz_harness.h):
// directly on concrete tensors, through ag::function under run_functions_eagerly, on the graph
// interpreter, and compiled by the JIT. Prints one line per program (PASS/FAIL), then a
// summary; fuzz_programs.py reads both.
//   fuzz_programs [--only NAME] [--from NAME]
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <random>
#include <sstream>

#include "fuzz_harness.h"

namespace agfuzz {

namespace {
template <class F>
IVec elementwise(const IVec& a, F f) {
  IVec r = a;
  for (I32& x : r.e) x = f(x);
  return r;
}
}  // namespace

IVec operator+(const IVec& a, I32 s) { return elementwise(a, [s](I32 x) { return x + s; }); }
IVec operator-(const IVec& a, I32 s) { return elementwise(a, [s](I32 x) { return x - s; }); }
IVec operator*(const IVec& a, I32 s) { return elementwise(a, [s](I32 x) { return x * s; }); }
I32 maximum(I32 a, I32 b) { return a.v >= b.v ? a : b; }
I32 minimum(I32 a, I32 b) { return a.v <= b.v ? a : b; }
// IEEE 754-2019 (docs/eager.md): NaN propagates, -0 < +0.
float maximum(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? b : a;
  return a < b ? b : a;
}
float minimum(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return std::signbit(a) ? a : b;
  return b < a ? b : a;
}
namespace {
I32 sum(const std::vector<I32>& e) {
  I32 s = 0;
  for (I32 x : e) s = s + x;
  return s;
}
}  // namespace

I32 reduce_sum(const IVec& a) { return sum(a.e); }
I32 reduce_max(const IVec& a) {
  I32 m = std::numeric_limits<int32_t>::min();
  for (I32 x : a.e) m = maximum(m, x);
  return m;
}
I32 reduce_sum(const IList& a) { return sum(a.e); }
float to_float(I32 a) { return static_cast<float>(a.v); }

std::string Input::str() const {
  std::ostringstream out;
  out << "a=" << a << " b=" << b << " x=" << x << " v=[";
  for (size_t i = 0; i < v.size(); ++i) out << (i ? "," : "") << v[i];
  out << "] k=" << k << " flag=" << (flag ? "true" : "false");
  return out.str();
}

std::string Result::str() const {
  if (!error.empty()) return "error: " + error;
  std::ostringstream out;
  out.precision(9);
  out << "ints [";
  for (size_t i = 0; i < ints.size(); ++i) out << (i ? "," : "") << ints[i];
  out << "] floats [";
  for (size_t i = 0; i < floats.size(); ++i) out << (i ? "," : "") << floats[i];
  out << "]";
  return out.str();
}

bool Result::operator==(const Result& o) const {
  if (error != o.error || ints != o.ints || floats.size() != o.floats.size()) return false;
  for (size_t i = 0; i < floats.size(); ++i) {
    if (std::isnan(floats[i]) && std::isnan(o.floats[i])) continue;  // NaNs' sign bits are not specified
    if (std::bit_cast<uint32_t>(floats[i]) != std::bit_cast<uint32_t>(o.floats[i])) return false;
  }
  return true;
}

std::vector<Program>& registry() {
  static std::vector<Program> programs;
  return programs;
}
bool add(Program p) {
  registry().push_back(std::move(p));
  return true;
}

namespace {

enum class Mode { Direct, Eagerly, Interpreter, Compiled };
constexpr Mode kModes[] = {Mode::Direct, Mode::Eagerly, Mode::Interpreter, Mode::Compiled};
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::Direct: return "direct";
    case Mode::Eagerly: return "run_functions_eagerly";
    case Mode::Interpreter: return "interpreter";
    case Mode::Compiled: return "compiled";
  }
  return "?";
}

// Candidate inputs: small values, so that loops bounded by them run 0, 1 and many times, and
// both signs, so that truncating / and % are exercised.
std::vector<Input> candidates(int seed) {
  std::mt19937 rng(static_cast<uint32_t>(seed));
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const float xs[] = {-2.5f, -1.0f, 0.0f, 0.5f, 1.75f, 3.0f, 6.25f};
  std::vector<Input> out;
  for (int i = 0; i < 64; ++i) {
    Input in;
    in.a = pick(-6, 9);
    in.b = pick(-6, 9);
    in.x = xs[pick(0, 6)];
    const int len = std::array{0, 1, 3}[static_cast<size_t>(pick(0, 2))];
    for (int j = 0; j < len; ++j) in.v.push_back(pick(-4, 6));
    in.k = std::array{0, 1, 3}[static_cast<size_t>(pick(0, 2))];
    in.flag = pick(0, 1) == 1;
    out.push_back(std::move(in));
  }
  return out;
}

struct Chosen {
  std::vector<Input> inputs;
  std::vector<Result> expected;
  int covered = 0, coverable = 0;
};

// Greedy: keep a candidate when its reference run reaches an outcome no kept one reached.
Chosen choose_inputs(const Program& p) {
  const int sites = p.branch_sites + p.loop_sites;
  Chosen c;
  c.coverable = 2 * p.branch_sites + 3 * p.loop_sites;
  std::vector<bool> seen(static_cast<size_t>(sites) * 3, false);
  for (const Input& in : candidates(p.seed)) {
    Coverage cov(sites);
    Result r = p.reference(in, cov);
    bool adds = c.inputs.empty();
    for (size_t i = 0; i < seen.size(); ++i)
      if (cov.hits()[i] && !seen[i]) adds = true, seen[i] = true;
    if (!adds) continue;
    c.inputs.push_back(in);
    c.expected.push_back(std::move(r));
    if (c.inputs.size() == 10) break;
  }
  c.covered = static_cast<int>(std::count(seen.begin(), seen.end(), true));
  return c;
}

// ag::run_functions_eagerly(true) for a scope, also when the call throws.
struct RunFunctionsEagerly {
  RunFunctionsEagerly() { ag::run_functions_eagerly(true); }
  ~RunFunctionsEagerly() { ag::run_functions_eagerly(false); }
  RunFunctionsEagerly(const RunFunctionsEagerly&) = delete;
  RunFunctionsEagerly& operator=(const RunFunctionsEagerly&) = delete;
};

Result to_result(const std::tuple<ag::Tensor, ag::Tensor>& t) {
  Result r;
  r.ints = std::get<0>(t).to_vector<int32_t>();
  r.floats = std::get<1>(t).to_vector<float>();
  return r;
}

struct Outcome {
  bool passed = true;
  std::string detail;
  int covered = 0, coverable = 0;
};

Outcome run_program(const Program& p) {
  Chosen chosen = choose_inputs(p);
  Outcome out{true, "", chosen.covered, chosen.coverable};
  // Every other program compiles for a vector of any length (an unknown dim in the code).
  ag::FunctionOptions compiled_options{.jit_compile = true};
  if (p.seed % 2 == 1)
    compiled_options.input_signature = {ag::TensorSpec({}, ag::int32), ag::TensorSpec({}, ag::int32),
                                        ag::TensorSpec({}, ag::float32), ag::TensorSpec({-1}, ag::int32)};
  ag::Variable acc(0, "acc");
  auto eagerly = ag::function(p.fn);
  auto interpreted = ag::function(p.fn, {.jit_compile = false});
  auto compiled = ag::function(p.fn, compiled_options);
  for (size_t i = 0; i < chosen.inputs.size() && out.passed; ++i) {
    const Input& in = chosen.inputs[i];
    const ag::Tensor a(in.a), b(in.b), x(in.x), v = ag::constant(in.v, ag::Shape{static_cast<int64_t>(in.v.size())});
    for (Mode mode : kModes) {
      Result got;
      try {
        acc.assign(0);  // the same Variable every call (a Function holds it by reference), reset
        switch (mode) {
          case Mode::Direct: got = to_result(p.fn(a, b, x, v, in.k, in.flag, acc)); break;
          case Mode::Eagerly: {
            const RunFunctionsEagerly scope;
            got = to_result(eagerly(a, b, x, v, in.k, in.flag, acc));
            break;
          }
          case Mode::Interpreter: got = to_result(interpreted(a, b, x, v, in.k, in.flag, acc)); break;
          case Mode::Compiled: got = to_result(compiled(a, b, x, v, in.k, in.flag, acc)); break;
        }
      } catch (const std::exception& e) {
        got.error = e.what();
      }
      if (!(got == chosen.expected[i])) {
        out.passed = false;
        out.detail = std::string(mode_name(mode)) + " on " + in.str() + ": expected " + chosen.expected[i].str() +
                     ", got " + got.str();
        break;
      }
    }
  }
  // The compiled mode must have run machine code, not fallen back to the interpreter.
  const ag::FunctionStats stats = compiled.stats();
  if (out.passed && stats.compiles + stats.disk_hits < 1) {
    out.passed = false;
    out.detail = "compiled: no concrete function was compiled (traces " + std::to_string(stats.traces) + ")";
  }
  return out;
}

}  // namespace
}  // namespace agfuzz

int main(int argc, char** argv) {
  std::string only, from;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--only") == 0) only = argv[i + 1];
    else if (std::strcmp(argv[i], "--from") == 0) from = argv[i + 1];
  }
  auto& programs = agfuzz::registry();
  std::sort(programs.begin(), programs.end(), [](const auto& l, const auto& r) { return l.name < r.name; });
  int passed = 0, failed = 0;
  long covered = 0, coverable = 0;
  bool started = from.empty();
  for (const agfuzz::Program& p : programs) {
    if (!only.empty() && p.name != only) continue;
    if (!started && p.name != from) continue;
    started = true;
    std::printf("RUN %s\n", p.name.c_str());
    std::fflush(stdout);  // a crash is pinned on the last program started
    const auto outcome = agfuzz::run_program(p);
    covered += outcome.covered;
    coverable += outcome.coverable;
    if (outcome.passed) {
      ++passed;
      std::printf("PASS %s (outcomes covered %d of %d)\n", p.name.c_str(), outcome.covered, outcome.coverable);
    } else {
      ++failed;
      std::printf("FAIL %s: %s\n", p.name.c_str(), outcome.detail.c_str());
    }
    std::fflush(stdout);
  }
  std::printf("SUMMARY %d passed, %d failed; branch and loop-count outcomes covered: %ld of %ld\n", passed, failed,
              covered, coverable);
  return failed == 0 ? 0 : 1;
}
