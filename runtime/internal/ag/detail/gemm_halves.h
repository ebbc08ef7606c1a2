// Whether a mid-size product runs as two halves on two threads or whole on one: measured, per
// shape, in the process that runs it (docs/jit.md, "Threads", GEMM halves).
//
// The halves (gemm_split.h) compute every element of C as the whole product does, so the choice
// changes no bit, only time; and time depends on where the two threads run. On a 2-vCPU VM whose
// vCPUs moved between phases, the same LSTM gate products (32x128x512) took 0.64x the whole
// product's time as halves in one phase and 1.4x in another, where a cache line took ~230 ns
// from one vCPU to the other: the worker's reads of the freshly written activations cost more
// than half the product saved. No threshold on the shape is right in both, so for each shape the
// first calls alternate whole and halves, the faster (by the best of each) is taken, and the
// trial runs again every kRetrialCalls calls in case the machine changed, and at once when the
// halves, once taken, fall behind: every kWatchEvery-th call of them is timed, and when the best
// of kWatchSamples such calls is slower than the whole product's best, both are tried again (a
// VM's vCPUs moved within seconds: a shape whose halves won in one phase then ran 1.3x slower
// than one thread until the next retrial, 2,048 calls later). A trial of the halves
// also reads the half of C the other thread wrote before its time is taken: the consumer, on
// this thread, pays that transfer, and a timing of the product alone chose halves that made
// the LSTM 1.34x slower on two threads than on one.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace ag::detail {

// How the halves are chosen: AG_GEMM_HALVES=measure (the default), 1 (always), 0 (never).
enum class GemmHalvesMode { Measure, Always, Never };
GemmHalvesMode gemm_halves_mode();
// Reads AG_GEMM_HALVES (ValueError for another value): with AG_NUM_THREADS, where errors can be
// raised (thread_pool.cpp's ensure_threads), never inside a product.
void read_gemm_halves_mode_from_env();
// For tests: sets the mode, returns the previous one.
GemmHalvesMode set_gemm_halves_mode(GemmHalvesMode mode);

// A product's identity for the trial: its shape and what else changes its time (the element
// type, which operands are transposed, whether B comes packed).
struct GemmShapeKey {
  int64_t m = 0, k = 0, n = 0;
  std::string_view dtype;  // "float32", "float64", "int32", "int64"
  int64_t transposes = 0;  // bit 0: A transposed, bit 1: B transposed
  bool packed_b = false;
  bool operator==(const GemmShapeKey&) const = default;
};

// The trial's bookkeeping for a fixed number of shapes (a program has a handful of mid-size
// products; the least recently used shape's slot is reused). Thread-safe. Pure in time: callers
// pass the elapsed nanoseconds, so tests drive it with their own.
class GemmHalvesChooser {
 public:
  static constexpr int kTrialsPerSide = 6;
  static constexpr int64_t kRetrialCalls = 2048;
  // Halves are taken when their best time is below this fraction of the whole product's: a
  // split occupies a second core and leaves the other half of C in its cache, which the
  // consumer reads next and the timing does not see.
  static constexpr double kRequiredGain = 0.9;
  static constexpr int kSlots = 32;
  // Halves taken: every kWatchEvery-th call is timed; kWatchSamples of them judge the choice.
  static constexpr int64_t kWatchEvery = 32;
  static constexpr int kWatchSamples = 4;

  struct Choice {
    bool halves = false;
    bool timed = false;  // a trial call, or a watched call of halves taken: report its time with record()
  };
  Choice choose(const GemmShapeKey& key);
  void record(const GemmShapeKey& key, bool halves, int64_t elapsed_ns);

  // Decisions taken since the chooser was made (tests).
  struct Decisions {
    int64_t halves = 0, whole = 0;
    int64_t fell_behind = 0;  // halves taken, then watched slower than the whole: tried again
  };
  Decisions decisions() const;

 private:
  struct Slot {
    GemmShapeKey key;
    bool used = false;
    int whole_runs = 0, halves_runs = 0;
    int64_t best_whole = 0, best_halves = 0;
    bool decided = false, halves = false;
    bool ever_decided = false;  // a decision was logged (AG_LOG=kernels)
    int64_t calls_since = 0;
    int watch_runs = 0;  // watched calls of halves taken since the decision (or the last judgement)
    int64_t watch_best = 0;
    uint64_t last_use = 0;
  };
  Slot& slot_of(const GemmShapeKey& key);
  void record_trial(Slot& s, bool halves, int64_t elapsed_ns, std::string& line);  // mu_ held
  static std::string decision_line(const Slot& s, bool first);
  static std::string watch_line(const Slot& s);
  mutable std::mutex mu_;
  Slot slots_[kSlots];
  uint64_t clock_ = 0;
  Decisions decisions_;
};

// The process's chooser, which gemm and gemm_packed_b consult.
GemmHalvesChooser& gemm_halves_chooser();

// One product's decision and, on a trial call, its timing: construct before the product, call
// halves() for the choice, and the destructor reports the time.
class GemmHalvesTrial {
 public:
  explicit GemmHalvesTrial(const GemmShapeKey& key);
  ~GemmHalvesTrial();
  GemmHalvesTrial(const GemmHalvesTrial&) = delete;
  GemmHalvesTrial& operator=(const GemmHalvesTrial&) = delete;
  bool halves() const { return choice_.halves; }
  bool timed() const { return choice_.timed; }

 private:
  GemmShapeKey key_;
  GemmHalvesChooser::Choice choice_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ag::detail
