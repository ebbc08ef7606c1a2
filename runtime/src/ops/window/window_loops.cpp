#include "window_loops.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ag/detail/parallel.h"

namespace ag::detail {
namespace {

// Calls f(kh, kw, input row, input column) for each window position of output (oh, ow) that
// falls inside the input (padding is skipped).
template <class F>
void for_window(const WindowGeometry& g, int64_t oh, int64_t ow, F&& f) {
  for (int64_t i = 0; i < g.kh; ++i) {
    const int64_t ih = oh * g.sh - g.pt + i * g.dh;
    if (ih < 0 || ih >= g.ih) continue;
    for (int64_t j = 0; j < g.kw; ++j) {
      const int64_t iw = ow * g.sw - g.pl + j * g.dw;
      if (iw < 0 || iw >= g.iw) continue;
      f(i, j, ih, iw);
    }
  }
}

int64_t x_at(const WindowGeometry& g, int64_t n, int64_t h, int64_t w) { return ((n * g.ih + h) * g.iw + w) * g.ic; }
int64_t y_at(const WindowGeometry& g, int64_t n, int64_t h, int64_t w) { return ((n * g.oh + h) * g.ow + w) * g.oc; }
int64_t w_at(const WindowGeometry& g, int64_t i, int64_t j) { return (i * g.kw + j) * g.ic * g.oc; }

// Work split by output rows (n * oh) of about this many multiply-adds per chunk.
int64_t row_grain(const WindowGeometry& g) {
  const int64_t per_row = std::max<int64_t>(g.ow * g.kh * g.kw * g.ic * g.oc, 1);
  return std::max<int64_t>(1, (int64_t{1} << 16) / per_row);
}

}  // namespace

template <class T>
void conv2d_loops(const WindowGeometry& g, const T* x, const T* w, T* y) {
  parallel_for(g.n * g.oh, row_grain(g), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = r / g.oh, oh = r % g.oh;
      for (int64_t ow = 0; ow < g.ow; ++ow) {
        T* out = y + y_at(g, n, oh, ow);
        std::fill(out, out + g.oc, T(0));
        for_window(g, oh, ow, [&](int64_t i, int64_t j, int64_t ih, int64_t iw) {
          const T* in = x + x_at(g, n, ih, iw);
          const T* f = w + w_at(g, i, j);
          for (int64_t c = 0; c < g.ic; ++c)
            for (int64_t o = 0; o < g.oc; ++o) out[o] += in[c] * f[c * g.oc + o];
        });
      }
    }
  });
}

template <class T>
void conv2d_backprop_input_loops(const WindowGeometry& g, const T* dy, const T* w, T* dx) {
  // Each batch element writes only its own dx: split by batch.
  std::fill(dx, dx + g.n * g.ih * g.iw * g.ic, T(0));
  parallel_for(g.n, 1, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n)
      for (int64_t oh = 0; oh < g.oh; ++oh)
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          const T* d = dy + y_at(g, n, oh, ow);
          for_window(g, oh, ow, [&](int64_t i, int64_t j, int64_t ih, int64_t iw) {
            T* out = dx + x_at(g, n, ih, iw);
            const T* f = w + w_at(g, i, j);
            for (int64_t c = 0; c < g.ic; ++c) {
              T sum = 0;
              for (int64_t o = 0; o < g.oc; ++o) sum += d[o] * f[c * g.oc + o];
              out[c] += sum;
            }
          });
        }
  });
}

template <class T>
void conv2d_backprop_filter_loops(const WindowGeometry& g, const T* x, const T* dy, T* dw) {
  // Each filter tap (i, j) is a sum over the whole batch: split by tap.
  parallel_for(g.kh * g.kw, 1, [&](int64_t begin, int64_t end) {
    for (int64_t tap = begin; tap < end; ++tap) {
      const int64_t i = tap / g.kw, j = tap % g.kw;
      T* out = dw + w_at(g, i, j);
      std::fill(out, out + g.ic * g.oc, T(0));
      for (int64_t n = 0; n < g.n; ++n)
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          const int64_t ih = oh * g.sh - g.pt + i * g.dh;
          if (ih < 0 || ih >= g.ih) continue;
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const int64_t iw = ow * g.sw - g.pl + j * g.dw;
            if (iw < 0 || iw >= g.iw) continue;
            const T* in = x + x_at(g, n, ih, iw);
            const T* d = dy + y_at(g, n, oh, ow);
            for (int64_t c = 0; c < g.ic; ++c)
              for (int64_t o = 0; o < g.oc; ++o) out[c * g.oc + o] += in[c] * d[o];
          }
        }
    }
  });
}

// MaxPoolGradGrad(x, gg): each window's element of gg at the window's first maximum of x (the
// gradient of MaxPoolGrad with respect to dy); `dy` is gg then, x-shaped.
template <class T>
void pool_loops(OpKind op, const WindowGeometry& g, const T* x, const T* dy, T* out) {
  const int64_t c = g.ic;
  const bool grad = op == OpKind::MaxPoolGrad || op == OpKind::AvgPoolGrad;
  const bool max = op == OpKind::MaxPool || op == OpKind::MaxPoolGrad || op == OpKind::MaxPoolGradGrad;
  const bool grad_grad = op == OpKind::MaxPoolGradGrad;
  if (grad) std::fill(out, out + g.n * g.ih * g.iw * c, T(0));
  // Gradients write windows that overlap across output rows: split by batch then.
  const int64_t rows = grad ? g.n : g.n * g.oh;
  parallel_for(rows, 1, [&](int64_t begin, int64_t end) {
    std::vector<T> acc(static_cast<size_t>(c));
    std::vector<int64_t> arg(static_cast<size_t>(c));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t n = grad ? r : r / g.oh;
      const int64_t oh_begin = grad ? 0 : r % g.oh, oh_end = grad ? g.oh : oh_begin + 1;
      for (int64_t oh = oh_begin; oh < oh_end; ++oh)
        for (int64_t ow = 0; ow < g.ow; ++ow) {
          int64_t count = 0;
          std::fill(acc.begin(), acc.end(), max ? -std::numeric_limits<T>::infinity() : T(0));
          for_window(g, oh, ow, [&](int64_t, int64_t, int64_t ih, int64_t iw) {
            const int64_t at = x_at(g, n, ih, iw);
            const T* in = x + at;
            for (int64_t k = 0; k < c; ++k) {
              const size_t s = static_cast<size_t>(k);
              if (!max) {
                acc[s] += in[k];
              } else if (count == 0 || in[k] > acc[s] || (std::isnan(in[k]) && !std::isnan(acc[s]))) {
                acc[s] = in[k];  // NaN wins and stays, as std::max-based pooling would not
                arg[s] = at + k;
              }
            }
            ++count;
          });
          const int64_t o = ((n * g.oh + oh) * g.ow + ow) * c;
          for (int64_t k = 0; k < c; ++k) {
            const size_t s = static_cast<size_t>(k);
            if (grad_grad) {
              out[o + k] = dy[arg[s]];
            } else if (!grad) {
              out[o + k] = max ? acc[s] : acc[s] / static_cast<T>(count);
            } else if (max) {
              out[arg[s]] += dy[o + k];
            } else {
              const T share = dy[o + k] / static_cast<T>(count);
              for_window(g, oh, ow, [&](int64_t, int64_t, int64_t ih, int64_t iw) { out[x_at(g, n, ih, iw) + k] += share; });
            }
          }
        }
    }
  });
}

template void conv2d_loops<float>(const WindowGeometry&, const float*, const float*, float*);
template void conv2d_loops<double>(const WindowGeometry&, const double*, const double*, double*);
template void conv2d_backprop_input_loops<float>(const WindowGeometry&, const float*, const float*, float*);
template void conv2d_backprop_input_loops<double>(const WindowGeometry&, const double*, const double*, double*);
template void conv2d_backprop_filter_loops<float>(const WindowGeometry&, const float*, const float*, float*);
template void conv2d_backprop_filter_loops<double>(const WindowGeometry&, const double*, const double*, double*);
template void pool_loops<float>(OpKind, const WindowGeometry&, const float*, const float*, float*);
template void pool_loops<double>(OpKind, const WindowGeometry&, const double*, const double*, double*);

}  // namespace ag::detail
