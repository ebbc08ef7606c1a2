// Baselines: the plain loops a C++ programmer would write, and Eigen expressions.
#include "baselines.h"

#include <Eigen/Core>
#include <cmath>
#include <cstring>
#include <random>

namespace bench {

void power_plain(const int32_t* x, int32_t* r) {
  int32_t a[10][10], t[10][10];
  std::memcpy(a, x, sizeof a);
  int32_t m[10][10] = {};
  for (int i = 0; i < 10; ++i) m[i][i] = 1;
  for (int p = 0; p < 100; ++p) {
    for (int i = 0; i < 10; ++i)
      for (int j = 0; j < 10; ++j) {
        int32_t s = 0;
        for (int k = 0; k < 10; ++k) s += a[i][k] * m[k][j];
        t[i][j] = s;
      }
    std::memcpy(m, t, sizeof m);
  }
  std::memcpy(r, m, sizeof m);
}

void power_eigen(const int32_t* x, int32_t* r) {
  using M = Eigen::Matrix<int32_t, 10, 10, Eigen::RowMajor>;
  const M a = Eigen::Map<const M>(x);
  M m = M::Identity();
  for (int p = 0; p < 100; ++p) m = a * m;
  Eigen::Map<M> out(r);
  out = m;
}

void dense_layer_eigen(const float* x, const float* w, const float* b, float* y) {
  using X = Eigen::Matrix<float, 8, 32, Eigen::RowMajor>;
  using W = Eigen::Matrix<float, 32, 32, Eigen::RowMajor>;
  using B = Eigen::Matrix<float, 1, 32>;
  X h = Eigen::Map<const X>(x) * Eigen::Map<const W>(w);
  h.rowwise() += Eigen::Map<const B>(b);
  Eigen::Map<X> out(y);
  out = h.array().tanh().matrix();
}

int collatz_plain(int n) {
  int steps = 0;
  while (n > 1) {
    n = n % 2 == 0 ? n / 2 : 3 * n + 1;
    ++steps;
  }
  return steps;
}

void tanh_chain_plain(const float* x, float* y, int64_t n, float a, float b, float c) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::max(x[i] * a + b, 0.0f) * c - std::tanh(x[i]);
}

void tanh_chain_eigen(const float* x, float* y, int64_t n, float a, float b, float c) {
  Eigen::Map<const Eigen::ArrayXf> X(x, n);
  Eigen::Map<Eigen::ArrayXf>(y, n) = (X * a + b).max(0.0f) * c - X.tanh();
}

void cheap_chain_plain(const float* x, float* y, int64_t n, float a, float b, float c) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::max(x[i] * a + b, 0.0f) * c + x[i];
}

void cheap_chain_eigen(const float* x, float* y, int64_t n, float a, float b, float c) {
  Eigen::Map<const Eigen::ArrayXf> X(x, n);
  Eigen::Map<Eigen::ArrayXf>(y, n) = (X * a + b).max(0.0f) * c + X;
}

float sum_squares_plain(const float* x, int64_t n) {
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i] * x[i] + 1.0f;
  return s;
}

float sum_squares_eigen(const float* x, int64_t n) {
  const Eigen::Map<const Eigen::ArrayXf> X(x, n);
  return (X * X + 1.0f).sum();
}

void column_sums_plain(const float* x, float* out, int64_t rows, int64_t cols) {
  for (int64_t j = 0; j < cols; ++j) out[j] = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) out[j] += x[r * cols + j];
}

void row_argmax_eigen(const float* x, int64_t* out, int64_t rows, int64_t cols) {
  using Rows = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const Rows> X(x, rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    Eigen::Index at = 0;
    X.row(r).maxCoeff(&at);
    out[r] = static_cast<int64_t>(at);
  }
}

void row_variances_eigen(const float* x, float* out, int64_t rows, int64_t cols) {
  using Rows = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const Eigen::Map<const Rows> X(x, rows, cols);
  Eigen::Map<Eigen::ArrayXf> variances(out, rows);
  for (int64_t r = 0; r < rows; ++r) {
    const auto row = X.row(r);
    variances(r) = (row - row.mean()).square().mean();
  }
}

int64_t stream_triad(float* a, const float* b, const float* c, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
  return 3 * n * static_cast<int64_t>(sizeof(float));
}

void stream_scale_nontemporal(const float* x, float* y, int64_t n, float s) {
  using Block = float __attribute__((vector_size(64)));
  for (int64_t i = 0; i < n; i += 16) {
    Block v;
    std::memcpy(&v, x + i, sizeof v);
    __builtin_nontemporal_store(v * s, reinterpret_cast<Block*>(y + i));
  }
#if defined(__x86_64__)
  __builtin_ia32_sfence();
#endif
}

__attribute__((noinline)) float add_one(float x) { return x + 1.0f; }

double estimate_pi_plain(unsigned seed, int64_t points) {
  std::mt19937 engine(seed);
  auto uniform01 = [&] { return static_cast<float>(engine() >> 8) * 0x1.0p-24f; };
  int64_t inside = 0;
  for (int64_t i = 0; i < points; ++i) {
    const float x = uniform01(), y = uniform01();
    inside += x * x + y * y < 1.0f;
  }
  return 4.0 * static_cast<double>(inside) / static_cast<double>(points);
}

float mlp_sgd_step_eigen(MlpParams p, const float* x, const float* y, int64_t batch, float lr) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Row = Eigen::Matrix<float, 1, Eigen::Dynamic>;
  const Eigen::Index b = batch;
  Eigen::Map<const Mat> X(x, b, 784), Y(y, b, 10);
  Eigen::Map<Mat> W1(p.w1, 784, 256), W2(p.w2, 256, 10);
  Eigen::Map<Row> B1(p.b1, 256), B2(p.b2, 10);
  const Mat H = ((X * W1).rowwise() + B1).cwiseMax(0.0f);
  const Mat Z = (H * W2).rowwise() + B2;
  const Mat S = Z.colwise() - Z.rowwise().maxCoeff();
  const Mat E = S.array().exp();
  const Eigen::VectorXf denom = E.rowwise().sum();
  const Mat P = E.array().colwise() / denom.array();
  const float loss = -(Y.array() * (S.array().colwise() - denom.array().log())).sum() / static_cast<float>(b);
  const Mat dZ = (P - Y) / static_cast<float>(b);
  const Mat dH = ((dZ * W2.transpose()).array() * (H.array() > 0.0f).cast<float>()).matrix();
  W2.noalias() -= lr * (H.transpose() * dZ);
  B2 -= lr * dZ.colwise().sum();
  W1.noalias() -= lr * (X.transpose() * dH);
  B1 -= lr * dH.colwise().sum();
  return loss;
}

}  // namespace bench
