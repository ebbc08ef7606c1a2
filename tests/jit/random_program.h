// The seeded random programs of the random-graph suites (random_graphs_test.cpp) and of the
// gradient compositions (gradient_compositions_random_test.cpp): elementwise chains with
// broadcasting, casts (uint8 and int8 integers too), reductions, matmuls (transposed operands
// too), transposes, concats of slices (some empty), slice updates, gathers with data-dependent
// indices (and segment sums of them), If and While with carried values.
#pragma once

#include <ag/ag.h>

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "test_data.h"

namespace agtest {

using Rng = std::mt19937_64;

// One random program over three inputs: a float [M,K], a float [K] (or [1]) and an integer [M,K]
// (3 x 4 unless a wide suite picks another). Every value keeps a shape from {[], [1], [K], [M,1],
// [1,K], [M,K]} so any two broadcast (layout ops leave the set and come back). Scales that depend
// on M and K are written so that 3 x 4 draws the same programs as before they did. Branch
// conditions, trip counts and gather indices come from integers only: they are exact on every
// path, so a float rounding difference can never flip control flow or pick another element.
class Program {
 public:
  explicit Program(uint64_t seed, int64_t rows = 3, int64_t cols = 4) : seed_(seed), M_(rows), K_(cols) {}

  ag::Tensor run(const ag::Tensor& a, const ag::Tensor& b, const ag::Tensor& n) const {
    Rng rng(seed_);
    std::vector<ag::Tensor> f = {a, b, ag::tanh(a * b)};
    std::vector<ag::Tensor> ints = {n, n % 5};
    const int steps = 6 + static_cast<int>(rng() % 10);
    for (int s = 0; s < steps; ++s) step(rng, f, ints, 0);
    return ag::stack({full(f.back()), full(f[f.size() / 2]), full(ag::cast(ints.back(), a.dtype()))});
  }

 private:
  static const ag::Tensor& pick(Rng& rng, const std::vector<ag::Tensor>& v) { return v[rng() % v.size()]; }

  static ag::Tensor unary(Rng& rng, const ag::Tensor& x) {
    switch (rng() % 12) {
      case 8: return ag::erf(x);
      case 9: return ag::atan(x) * 0.5f;
      case 10: return ag::log1p(ag::abs(x));
      case 0: return ag::tanh(x);
      case 1: return ag::sigmoid(x);
      case 2: return ag::relu(x) - 0.5f;
      case 3: return ag::abs(x);
      case 4: return ag::sin(x);
      case 5: return ag::exp(ag::tanh(x));
      case 6: return ag::sqrt(ag::abs(x) + 0.25f);
      case 7: return ag::square(ag::tanh(x));
      default: return -x * 0.75f;
    }
  }

  static ag::Tensor binary(Rng& rng, const ag::Tensor& x, const ag::Tensor& y) {
    switch (rng() % 6) {
      case 0: return x + y;
      case 1: return x - y;
      case 2: return ag::tanh(x * y);
      case 3: return x / (ag::abs(y) + 1.0f);
      case 4: return ag::maximum(x, y);
      default: return ag::minimum(x, y * 0.5f);
    }
  }

  // Reductions keep dims, so results stay in the broadcast-compatible shape set. A sum is scaled
  // by (elements summed at 3 x 4) / (elements summed here): wide values stay moderate.
  ag::Tensor reduce(Rng& rng, const ag::Tensor& x) const {
    auto per = [](int64_t n3x4, int64_t n) { return static_cast<float>(static_cast<double>(n3x4) / static_cast<double>(n)); };
    // A dim is 1, M (axis 0) or K (the last), and unknown (-1) while a function with an
    // input_signature of unknown dims traces: the scale reads only whether a dim is 1.
    auto is_one = [&](size_t axis) { return x.shape()[axis] == 1; };
    if (x.rank() < 2) {  // [], [1] or [K]
      const bool one = x.rank() == 0 || is_one(0);
      return ag::reduce_sum(x) * (0.125f * per(one ? 1 : 4, one ? 1 : K_));
    }
    const std::vector<int64_t> axes = rng() % 3 == 0 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{static_cast<int64_t>(rng() % 2)};
    int64_t summed = 1, summed3x4 = 1;
    for (int64_t a : axes) {
      if (is_one(static_cast<size_t>(a))) continue;
      summed *= a == 0 ? M_ : K_;
      summed3x4 *= a == 0 ? 3 : 4;
    }
    switch (rng() % 4) {
      case 0: return ag::reduce_sum(x, axes, true) * (0.25f * per(summed3x4, summed));
      case 1: return ag::reduce_mean(x, axes, true);
      case 2: return ag::reduce_max(x, axes, true);
      default: return ag::reduce_min(x, axes, true);
    }
  }

  ag::Tensor full(const ag::Tensor& x) const { return x + ag::zeros({M_, K_}, x.dtype()); }

  // Layout ops: each leaves the broadcast shape set and comes back to it.
  ag::Tensor layout(Rng& rng, const std::vector<ag::Tensor>& f, const std::vector<ag::Tensor>& ints) const {
    const ag::Tensor x = full(pick(rng, f)), y = full(pick(rng, f));
    switch (rng() % 6) {
      case 5:  // x's rows 1.. replaced by y's rows ..-1 (a slice update; in place when compiled)
        if (M_ < 2) return x;
        return x.at(ag::Slice{1}).set(y(ag::Slice{0, -1}) * 0.5f);
      case 0: return ag::transpose(unary(rng, ag::transpose(x)) * 0.5f + ag::transpose(y));  // via [4,3]
      case 1: return ag::transpose(ag::reduce_max(ag::transpose(x), {1}, true));             // [K,1] -> [1,K]
      case 2: {  // columns of x then of y
        const int64_t k = 1 + static_cast<int64_t>(rng() % static_cast<uint64_t>(K_ - 1));
        return ag::concat({ag::slice(x, {0, 0}, {M_, k}), ag::slice(y, {0, k}, {M_, K_ - k})}, 1);
      }
      case 3: {  // rows of x then of y; r = 0 or M concatenates an empty slice
        const int64_t r = static_cast<int64_t>(rng() % static_cast<uint64_t>(M_ + 1));
        return ag::concat({ag::slice(x, {0, 0}, {r, K_}), ag::slice(y, {r, 0}, {M_ - r, K_})}, 0);
      }
      default: {  // gather with indices computed from the integers (always in range)
        const ag::Tensor i = full(pick(rng, ints));
        const uint64_t r = rng();  // one draw, as before segment sums were drawn here too
        if (r % 2) return ag::gather(x, ag::floormod(ag::reduce_sum(i, {0}), K_), 1);
        const ag::Tensor rows = ag::floormod(ag::reduce_sum(i, {1}), M_);
        if (r / 2 % 2) return ag::gather(x, rows, 0);
        // Message passing: row m of x, gathered, summed into row rows[m] + 1 (a compiled scatter
        // loop with the gather fused into it).
        return ag::unsorted_segment_sum(ag::gather(x, rows, 0) * 0.5f, ag::floormod(rows + 1, M_), M_);
      }
    }
  }

  void step(Rng& rng, std::vector<ag::Tensor>& f, std::vector<ag::Tensor>& ints, int depth) const {
    switch (rng() % (depth < 2 ? 12 : 10)) {
      case 0:
      case 1: f.push_back(unary(rng, pick(rng, f))); break;
      case 2:
      case 3: f.push_back(binary(rng, pick(rng, f), pick(rng, f))); break;
      case 4: f.push_back(reduce(rng, pick(rng, f))); break;
      case 5: {  // matmul [M,K] x [K,K] with a constant matrix (0.1 at K = 4, ~1/sqrt(K) wider)
        const ag::Tensor x = full(pick(rng, f));
        const float scale = static_cast<float>(0.2 / std::sqrt(static_cast<double>(K_)));
        const ag::Tensor w = agtest::sample(x.dtype(), {K_, K_}, rng() % 1000, agtest::Values::Moderate) * scale;
        switch (rng() % 3) {  // the same product, with w or both operands read transposed
          case 0: f.push_back(ag::tanh(ag::matmul(x, w))); break;
          case 1: f.push_back(ag::tanh(ag::matmul(x, ag::transpose(w), false, true))); break;
          default: f.push_back(ag::tanh(ag::transpose(ag::matmul(w, ag::transpose(x), true, false)))); break;  // (w^T x^T)^T
        }
        break;
      }
      case 6: {  // integer arithmetic, exact everywhere
        const ag::Tensor& i = pick(rng, ints);
        const ag::Tensor& j = pick(rng, ints);
        switch (rng() % 5) {
          case 4:  // 8-bit arithmetic wraps: the same in every mode
            ints.push_back(ag::cast(ag::cast(i * 37, ag::uint8) + ag::cast(j, ag::uint8), i.dtype()) % 9 +
                           ag::cast(ag::cast(j * 50, ag::int8) / 3, i.dtype()) % 4);
            break;
          case 0: ints.push_back((i * 3 + j) % 11); break;
          case 1: ints.push_back(ag::maximum(i, j) - ag::floordiv(j, 3)); break;
          case 2: ints.push_back(ag::reduce_sum(i, {1}, true) % 7); break;
          default: ints.push_back(ag::floormod(i - j * 2, 5)); break;
        }
        break;
      }
      case 7: {
        const ag::Tensor& x = pick(rng, f);
        f.push_back(ag::cast(pick(rng, ints), x.dtype()) * 0.1f + x);
        break;
      }
      case 8:
      case 9: f.push_back(layout(rng, f, ints)); break;
      case 10: {  // If on an integer condition; both branches run random steps on copies of the state
        const ag::Tensor c = ag::reduce_sum(pick(rng, ints)) % 2 == 0;
        const uint64_t then_seed = rng(), else_seed = rng();
        const ag::Tensor x = full(pick(rng, f));
        const ag::Tensor k = full(pick(rng, ints));
        auto branch = [&](uint64_t bs) {
          Rng r(bs);
          std::vector<ag::Tensor> bf = {x, f.front()};
          std::vector<ag::Tensor> bi = {k};
          for (int s = 0; s < 3; ++s) step(r, bf, bi, depth + 1);
          return std::tuple<ag::Tensor, ag::Tensor>{full(bf.back()), full(bi.back())};
        };
        auto [y, m] = ag::cond(c, [&] { return branch(then_seed); }, [&] { return branch(else_seed); });
        f.push_back(y);
        ints.push_back(m);
        break;
      }
      default: {  // While with an integer trip count (0..3) carrying a float and an int value
        const ag::Tensor trips = ag::reduce_max(pick(rng, ints)) % 4;
        const uint64_t body_seed = rng();
        auto [i, x, k] = ag::while_loop(
            [&](const ag::Tensor& it, const ag::Tensor&, const ag::Tensor&) { return it < trips; },
            [&](const ag::Tensor& it, const ag::Tensor& xv, const ag::Tensor& kv) {
              Rng r(body_seed);
              std::vector<ag::Tensor> bf = {xv, f.front()};
              std::vector<ag::Tensor> bi = {kv, it + kv};
              for (int s = 0; s < 3; ++s) step(r, bf, bi, depth + 1);
              return std::tuple<ag::Tensor, ag::Tensor, ag::Tensor>{it + 1, full(ag::tanh(bf.back())), full(bi.back() % 13)};
            },
            std::tuple<ag::Tensor, ag::Tensor, ag::Tensor>{ag::zeros({}, ints.front().dtype()), full(pick(rng, f)), full(pick(rng, ints))});
        f.push_back(x);
        ints.push_back(k + i);
        break;
      }
    }
  }

  uint64_t seed_;
  int64_t M_, K_;
};

struct Dims {
  int64_t rows = 3, cols = 4;
};

// What a function's index k picks: float32 or float64 values, int32 or int64 integers, and for
// one in four an input_signature of unknown dims (at 3 x 4, half of those get a size-1 b,
// broadcast at run time; not wider: a sum's scale reads whether its dim is 1, which an unknown
// dim hides).
struct Mix {
  ag::DType fdt, idt;
  bool unknown, b_of_one;
  std::vector<ag::TensorSpec> signature;  // empty unless unknown
};

inline Mix mix_of(int k, Dims d) {
  Mix m{k % 3 == 1 ? ag::float64 : ag::float32, k % 2 ? ag::int64 : ag::int32, k % 4 == 2, false, {}};
  m.b_of_one = m.unknown && k % 8 == 2 && d.rows * d.cols == 12;
  if (m.unknown) m.signature = {ag::TensorSpec({-1, -1}, m.fdt), ag::TensorSpec({-1}, m.fdt), ag::TensorSpec({-1, d.cols}, m.idt)};
  return m;
}

}  // namespace agtest
