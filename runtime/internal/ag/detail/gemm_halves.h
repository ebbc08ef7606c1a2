// Whether a mid-size product runs as two halves on two threads or whole on one: measured, per
// shape, in the process that runs it (split_chooser.h; docs/jit.md, "Threads", GEMM halves).
//
// The halves (gemm_split.h) compute every element of C as the whole product does, so the choice
// changes no bit, only time. The same LSTM gate products (32x128x512) took 0.64x the whole
// product's time as halves in one phase of a 2-vCPU VM and 1.4x in another, where a cache line
// took ~230 ns from one vCPU to the other: the worker's reads of the freshly written activations
// cost more than half the product saved. A trial of the halves also reads the half of C the
// other thread wrote before its time is taken: the consumer, on this thread, pays that
// transfer, and a timing of the product alone chose halves that made the LSTM 1.34x slower on
// two threads than on one.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "ag/detail/split_chooser.h"

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

// `agc: MatMul 32x128x512 float32, B packed, 2 threads`: the start of each AG_LOG=kernels line
// about a shape's trial.
std::string describe_gemm_shape(const GemmShapeKey& key);

// The trial's bookkeeping (split_chooser.h): a split is the product's two halves. Thread-safe.
using GemmHalvesChooser = SplitChooser<GemmShapeKey>;

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
  bool halves() const { return choice_.split; }
  bool timed() const { return choice_.timed; }

 private:
  GemmShapeKey key_;
  GemmHalvesChooser::Choice choice_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ag::detail
