// The runtime side of the program fuzzer (fuzz_programs.py writes the programs).
//
// Each generated program exists twice in its translation unit: an AG_FUNCTION on ag::Tensor
// (rewritten by ag-rewrite at build time) and a plain C++ reference on I32/float/IVec, written
// from the same statement tree. The reference defines the answer. It records which branches
// went which way and how often each loop ran (0, 1, many times), and the harness picks inputs
// that cover both ways of every branch and every loop count it can reach.
#pragma once

#include <ag/ag.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace agfuzz {

// agc's int32 semantics (docs/eager.md): + - * and negation wrap; / and % truncate, and
// INT_MIN / -1 wraps. The generator only divides by non-zero constants.
struct I32 {
  int32_t v = 0;
  I32() = default;
  I32(int32_t x) : v(x) {}  // NOLINT: literals convert, as they do to ag::Tensor

  static I32 wrap(uint32_t u) { return I32(static_cast<int32_t>(u)); }
  friend I32 operator+(I32 a, I32 b) { return wrap(static_cast<uint32_t>(a.v) + static_cast<uint32_t>(b.v)); }
  friend I32 operator-(I32 a, I32 b) { return wrap(static_cast<uint32_t>(a.v) - static_cast<uint32_t>(b.v)); }
  friend I32 operator*(I32 a, I32 b) { return wrap(static_cast<uint32_t>(a.v) * static_cast<uint32_t>(b.v)); }
  friend I32 operator/(I32 a, I32 b) { return b.v == -1 ? -a : I32(a.v / b.v); }
  friend I32 operator%(I32 a, I32 b) { return b.v == -1 ? I32(0) : I32(a.v % b.v); }
  I32 operator-() const { return wrap(0u - static_cast<uint32_t>(v)); }
  I32& operator+=(I32 b) { return *this = *this + b; }
  I32& operator-=(I32 b) { return *this = *this - b; }
  I32& operator*=(I32 b) { return *this = *this * b; }
  friend bool operator==(I32 a, I32 b) { return a.v == b.v; }
  friend auto operator<=>(I32 a, I32 b) { return a.v <=> b.v; }
};

// An int32 vector with scalar broadcasting: the reference of the programs' vector local.
struct IVec {
  std::vector<I32> e;
  auto begin() const { return e.begin(); }
  auto end() const { return e.end(); }
};
IVec operator+(const IVec& a, I32 s);
IVec operator*(const IVec& a, I32 s);
IVec operator-(const IVec& a, I32 s);

I32 maximum(I32 a, I32 b);
I32 minimum(I32 a, I32 b);
float maximum(float a, float b);
float minimum(float a, float b);
I32 reduce_sum(const IVec& a);
I32 reduce_max(const IVec& a);  // the lowest int32 when empty, as agc's
float to_float(I32 a);

// The reference of the programs' TensorArray: appends and reads.
struct IList {
  std::vector<I32> e;
  I32 size() const { return static_cast<int32_t>(e.size()); }
  void append(I32 x) { e.push_back(x); }
  I32 read(I32 i) const { return e.at(static_cast<size_t>(i.v)); }
};
I32 reduce_sum(const IList& a);

struct Input {
  int32_t a = 0, b = 0;
  float x = 0;
  std::vector<int32_t> v;
  int k = 0;
  bool flag = false;
  std::string str() const;
};

struct Result {
  std::vector<int32_t> ints;
  std::vector<float> floats;
  std::string error;  // what a mode threw
  std::string str() const;
  bool operator==(const Result&) const;  // floats compare bit for bit
};

// Outcomes seen by the reference: each branch site taken each way, each loop site run 0, 1 or
// more times per entry.
class Coverage {
 public:
  explicit Coverage(int sites) : hits_(static_cast<size_t>(sites) * 3, false) {}
  bool branch(int site, bool taken) {
    hits_[static_cast<size_t>(site) * 3 + (taken ? 1 : 0)] = true;
    return taken;
  }
  void loop_trips(int site, int64_t trips) { hits_[static_cast<size_t>(site) * 3 + (trips > 1 ? 2 : trips)] = true; }
  const std::vector<bool>& hits() const { return hits_; }

 private:
  std::vector<bool> hits_;
};

// Counts one loop entry's iterations; records them when the loop is left (break, return too).
class Trips {
 public:
  Trips(Coverage& cov, int site) : cov_(cov), site_(site) {}
  ~Trips() { cov_.loop_trips(site_, n_); }
  Trips(const Trips&) = delete;
  Trips& operator=(const Trips&) = delete;
  // Loops are bounded by parameters (at most a few iterations): a runaway one is a generator bug.
  void iteration() {
    if (++n_ > 100000) throw std::logic_error("a reference loop does not terminate (a generator bug)");
  }

 private:
  Coverage& cov_;
  int site_;
  int64_t n_ = 0;
};

using TensorFn = std::tuple<ag::Tensor, ag::Tensor> (*)(ag::Tensor, ag::Tensor, ag::Tensor, ag::Tensor, int, bool,
                                                       ag::Variable&);
using ReferenceFn = Result (*)(const Input&, Coverage&);

struct Program {
  std::string name;
  TensorFn fn;
  ReferenceFn reference;
  int branch_sites;  // sites that can go two ways
  int loop_sites;    // sites that can run 0, 1 or many times
  int seed;          // picks the candidate inputs
};

std::vector<Program>& registry();
bool add(Program p);

}  // namespace agfuzz

#define AGFUZZ_PROGRAM(name, branch_sites, loop_sites, seed)                                  \
  static const bool name##_registered =                                                        \
      ::agfuzz::add(::agfuzz::Program{#name, &name, &name##_ref, branch_sites, loop_sites, seed})
