// Hand-written baselines for the JIT benchmarks (compiled with -O3 -march=native).
#pragma once

#include <cstdint>

namespace bench {

// W1: r = x^100 by 100 chained 10x10 int32 products, r starting at the identity.
void power_plain(const int32_t* x, int32_t* r);  // int[10][10] triple loop
void power_eigen(const int32_t* x, int32_t* r);  // Eigen::Matrix<int, 10, 10>
// W1b: y = tanh(x * w + b), x [8,32], w [32,32], b [32], row-major: Eigen fixed-size matrices.
void dense_layer_eigen(const float* x, const float* w, const float* b, float* y);
// W2: Collatz steps.
int collatz_plain(int n);
// W3: y = relu(x*a+b)*c - tanh(x) and y = maximum(x*a+b, 0)*c + x.
void tanh_chain_plain(const float* x, float* y, int64_t n, float a, float b, float c);
void tanh_chain_eigen(const float* x, float* y, int64_t n, float a, float b, float c);
void cheap_chain_plain(const float* x, float* y, int64_t n, float a, float b, float c);
void cheap_chain_eigen(const float* x, float* y, int64_t n, float a, float b, float c);
// W3 reduction: sum(x*x + 1). The plain loop sums in order (what -O3 without -ffast-math may do);
// Eigen's sum is vectorized (reassociated), as agc's compiled reductions are.
float sum_squares_plain(const float* x, int64_t n);
float sum_squares_eigen(const float* x, int64_t n);
// W3 column sums of a row-major rows x cols matrix into out[cols], row after row (the loop
// vectorizes over the columns; Eigen's colwise().sum() of a row-major map took 7x as long).
void column_sums_plain(const float* x, float* out, int64_t rows, int64_t cols);
// W3 row variances of a row-major rows x cols matrix into out[rows], with Eigen: each row's mean,
// then the mean of its squared deviations (vectorized, reassociated sums).
void row_variances_eigen(const float* x, float* out, int64_t rows, int64_t cols);
// W3 row argmax: each row's first index of its maximum (NaN never greater), Eigen's maxCoeff.
void row_argmax_eigen(const float* x, int64_t* out, int64_t rows, int64_t cols);
// STREAM triad a = b + s*c; returns bytes moved.
int64_t stream_triad(float* a, const float* b, const float* c, int64_t n, float s);
// y = s*x stored around the cache (non-temporal stores; y 64-byte aligned, n a multiple of 16):
// one read and one write stream without the write's read-for-ownership, the most a one-input
// elementwise chain can do on tensors far larger than the cache.
void stream_scale_nontemporal(const float* x, float* y, int64_t n, float s);
// W4: the direct C++ call a cached trivial function is compared with.
float add_one(float x);
// W6: pi from `points` uniform float points of std::mt19937 (hand-written float conversion).
double estimate_pi_plain(unsigned seed, int64_t points);

// W8: one SGD step of a 784-256-10 MLP (relu, softmax cross-entropy) on a batch, forward and
// backward written by hand with Eigen. All matrices row-major, as agc's tensors; updates in
// place; returns the loss.
struct MlpParams {
  float* w1;  // [784, 256]
  float* b1;  // [256]
  float* w2;  // [256, 10]
  float* b2;  // [10]
};
float mlp_sgd_step_eigen(MlpParams p, const float* x, const float* y, int64_t batch, float lr);

}  // namespace bench
