// The measured choice between a mid-size product's halves and the whole product
// (ag/detail/gemm_halves.h).
#include "ag/detail/gemm_halves.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <string>

#include "ag/detail/env_choice.h"
#include "ag/detail/parallel.h"

namespace ag::detail {
namespace {

std::atomic<GemmHalvesMode> g_mode{GemmHalvesMode::Measure};

}  // namespace

GemmHalvesMode gemm_halves_mode() { return g_mode.load(std::memory_order_relaxed); }

void read_gemm_halves_mode_from_env() {
  g_mode.store(env_choice("AG_GEMM_HALVES", GemmHalvesMode::Measure,
                          {{"measure", GemmHalvesMode::Measure}, {"1", GemmHalvesMode::Always}, {"0", GemmHalvesMode::Never}},
                          "measure, 1 (always) or 0 (never)"),
               std::memory_order_relaxed);
}

GemmHalvesMode set_gemm_halves_mode(GemmHalvesMode mode) { return g_mode.exchange(mode, std::memory_order_relaxed); }

std::string describe_gemm_shape(const GemmShapeKey& key) {
  return fmt::format("agc: MatMul {}x{}x{} {}{}{}{}, {} threads", key.m, key.k, key.n, key.dtype, key.transposes & 1 ? ", A transposed" : "",
                     key.transposes & 2 ? ", B transposed" : "", key.packed_b ? ", B packed" : "", parallel_threads());
}

GemmHalvesChooser& gemm_halves_chooser() {
  static GemmHalvesChooser chooser(describe_gemm_shape);
  return chooser;
}

GemmHalvesTrial::GemmHalvesTrial(const GemmShapeKey& key) : key_(key) {
  switch (gemm_halves_mode()) {
    case GemmHalvesMode::Always: choice_ = {true, false}; return;
    case GemmHalvesMode::Never: choice_ = {false, false}; return;
    case GemmHalvesMode::Measure: break;
  }
  choice_ = gemm_halves_chooser().choose(key);
  if (choice_.timed) start_ = std::chrono::steady_clock::now();
}

GemmHalvesTrial::~GemmHalvesTrial() {
  if (!choice_.timed) return;
  const auto elapsed = std::chrono::steady_clock::now() - start_;
  gemm_halves_chooser().record(key_, choice_.split, std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
}

}  // namespace ag::detail
