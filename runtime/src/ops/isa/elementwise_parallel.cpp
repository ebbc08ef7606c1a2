// Large elementwise ops: split over the shared pool, and their results written around the cache
// past the streaming bar (docs/eager.md, "Memory"). An op splits when each operand is the whole
// shape, one element, a row: the result's last dims (a bias [N] against [M, N], a [H, W] map
// against [B, H, W]; leading 1s allowed), or a column: the result's first dims and 1s (a
// per-row scale [M, 1], a softmax's row sums), rows and columns cutting the result at the same
// dim. Other broadcasts (a middle dim, [M, 1, W] against [M, H, W]; operands that cut the
// result at different dims) split along the result's first dims over which every operand is
// either the result or 1s: an "outer" layout. Each element is computed by the serial kernel
// (elementwise.cpp) from the same operand elements, so the result is the serial one bit for bit,
// whatever the thread count and with or without streaming stores.
#include <algorithm>

#include "ag/detail/parallel.h"
#include "ag/detail/streaming_stores.h"
#include "chunk_views.h"
#include "isa_kernels.h"

namespace ag::detail::AG_KERNEL_NS {
namespace {

// Elements per chunk of a parallel elementwise op, and the unit a flat op's chunks are cut in
// (64 elements: every chunk starts as aligned as the whole buffer). docs/jit.md, "Threads", has
// the measurement behind the grain.
constexpr int64_t kParallelGrain = kElementwiseGrain, kChunkUnit = 64;
// Bytes of result a streamed piece computes into its scratch buffer, which then stays in L1:
// with 8 KB pieces and more the copy ran slower than cached stores on Zen 4.
constexpr int64_t kStreamPieceBytes = 4096;

// Outer layouts: Sliced operands have the result's first dims, Fixed ones 1s there.
enum class Role : uint8_t { Whole, Scalar, Row, Column, Sliced, Fixed };

// How an op's operands cover its result.
struct Layout {
  bool splits = false;  // at most 3 operands, each whole, one element, a row or a column; or outer
  int64_t row = 0;      // elements of a row of the result (0: no row or column operand, the op is flat)
  Role roles[3] = {};
  // Outer layouts (outer > 0): the op is cut into `outer` slices along the result's first dims;
  // a slice of the result is `rest` (the result's other dims), of operand k `rests[k]`.
  int64_t outer = 0;
  Shape rest, rests[3];
};

// Whether `s`, without its leading 1s, is the last dims of `out` (and not all of them).
bool is_row_of(const Shape& s, const Shape& out) {
  int64_t lead = 0;
  while (lead < s.rank() && s[lead] == 1) ++lead;
  const int64_t dims = s.rank() - lead;
  if (dims == 0 || dims >= out.rank()) return false;
  for (int64_t j = 0; j < dims; ++j)
    if (s[lead + j] != out[out.rank() - dims + j]) return false;
  return true;
}

// Whether `s` is the first dims of `out` followed by 1s (at least one): then each of its
// elements belongs to a row of out.num_elements() / s.num_elements() elements.
bool is_column_of(const Shape& s, const Shape& out) {
  if (s.rank() != out.rank()) return false;
  int64_t k = 0;
  while (k < s.rank() && s[k] == out[k]) ++k;
  if (k == 0 || k == s.rank()) return false;
  for (int64_t j = k; j < s.rank(); ++j)
    if (s[j] != 1) return false;
  return true;
}

// The outer layout of operands that broadcast otherwise: the result's first `k` dims, for the
// largest k (below its rank) over which every operand, aligned to the result's rank, has all
// of the result's dims (Sliced) or all 1s (Fixed). None (splits false) when k would be 0.
Layout outer_layout_of(std::span<const Tensor> in, const Shape& out) {
  Layout l;
  const int64_t rank = out.rank();
  auto aligned = [&](const Shape& s, int64_t j) { return j < rank - s.rank() ? int64_t{1} : s[j - (rank - s.rank())]; };
  auto fits = [&](const Shape& s, int64_t k, bool sliced) {
    for (int64_t j = 0; j < k; ++j)
      if (aligned(s, j) != (sliced ? out[j] : 1)) return false;
    return true;
  };
  int64_t k = rank - 1;
  for (; k > 0; --k) {
    bool all = true;
    for (const Tensor& t : in) all &= t.num_elements() == 1 || fits(t.shape(), k, true) || fits(t.shape(), k, false);
    if (all) break;
  }
  if (k == 0) return l;
  l.outer = 1;
  for (int64_t j = 0; j < k; ++j) l.outer *= out[j];
  if (l.outer < 2) return Layout{};
  l.rest = Shape(out.begin() + k, out.end());
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& s = in[i].shape();
    const int64_t skip = std::max<int64_t>(0, k - (rank - s.rank()));  // its own dims among the first k
    l.rests[i] = Shape(s.begin() + skip, s.end());
    l.roles[i] = in[i].num_elements() == 1 ? Role::Scalar : fits(s, k, true) ? Role::Sliced : Role::Fixed;
  }
  l.splits = true;
  return l;
}

Layout layout_of(std::span<const Tensor> in, const Shape& out) {
  Layout l;
  if (in.size() > 3) return l;
  const int64_t n = out.num_elements();
  auto same_rows = [&](int64_t row) { return l.row == 0 || l.row == row; };
  for (size_t k = 0; k < in.size(); ++k) {
    const Tensor& t = in[k];
    const int64_t count = t.num_elements();
    if (t.shape() == out) {
      l.roles[k] = Role::Whole;
    } else if (count == 1) {
      l.roles[k] = Role::Scalar;
    } else if (is_row_of(t.shape(), out) && same_rows(count)) {
      l.roles[k] = Role::Row;
      l.row = count;
    } else if (is_column_of(t.shape(), out) && same_rows(n / count)) {
      l.roles[k] = Role::Column;
      l.row = n / count;
    } else {
      return outer_layout_of(in, out);
    }
  }
  l.splits = true;
  return l;
}

// One chunk's pieces. Each piece is elements [at, at + count) of the result, shaped {count} or
// {rows, row}; it is computed straight into the result, or (streaming) into a scratch buffer
// that is then copied out with non-temporal stores. The operands' views are made once and
// re-aimed at each piece.
class Pieces {
 public:
  Pieces(OpKind op, std::span<const Tensor> in, const Layout& l, Tensor& out, int64_t scratch_elements, SourceLoc loc)
      : op_(op), in_(in), layout_(l), out_(out), loc_(loc) {
    for (size_t k = 0; k < in.size(); ++k) {
      const Tensor& t = in[k];
      if (l.roles[k] == Role::Scalar && t.rank() == 0) {
        views_[k] = t;  // never re-aimed
        continue;
      }
      views_[k] = view_of(t);
      // A one-element operand is a rank-0 view: it broadcasts against any piece; a Fixed one
      // is its slice, the same for every piece.
      if (l.roles[k] == Role::Scalar) re_aim(views_[k], detail::impl_of(t)->data, Shape{});
      if (l.roles[k] == Role::Fixed) re_aim(views_[k], detail::impl_of(t)->data, l.rests[k]);
    }
    target_ = scratch_elements > 0 ? make_tensor(out.dtype(), Shape{scratch_elements}) : view_of(out);
    scratch_ = scratch_elements > 0 ? detail::impl_of(target_)->data : nullptr;
  }

  // The piece at result element `at`, shaped `shape` ({count} within one row, or {rows, row});
  // row operands from their element `row_at`, column operands from the piece's first row.
  void run(int64_t at, int64_t row_at, const Shape& shape) {
    const Shape row_shape{shape.back()};
    const Shape column_shape = shape.rank() == 1 ? Shape{} : Shape{shape[0], 1};
    for (size_t k = 0; k < in_.size(); ++k) {
      switch (layout_.roles[k]) {
        case Role::Whole: re_aim(views_[k], element(in_[k], at), shape); break;
        case Role::Row: re_aim(views_[k], element(in_[k], row_at), row_shape); break;
        case Role::Column: re_aim(views_[k], element(in_[k], at / layout_.row), column_shape); break;
        case Role::Scalar: case Role::Sliced: case Role::Fixed: break;  // outer roles: run_outer
      }
    }
    compute(at, shape);
  }

  // Outer layouts: the result's slices [first, first + count) along its outer dims.
  void run_outer(int64_t first, int64_t count) {
    for (size_t k = 0; k < in_.size(); ++k) {
      if (layout_.roles[k] != Role::Sliced) continue;
      const int64_t slice = layout_.rests[k].num_elements();
      re_aim(views_[k], element(in_[k], first * slice), with_leading(count, layout_.rests[k]));
    }
    compute(first * layout_.rest.num_elements(), with_leading(count, layout_.rest));
  }

 private:
  static Shape with_leading(int64_t count, const Shape& rest) {
    Shape s = rest;
    s.insert(0, count);
    return s;
  }

  // The piece at result element `at`, shaped `shape`, from the views as aimed.
  void compute(int64_t at, const Shape& shape) {
    re_aim(target_, scratch_ ? scratch_ : element(out_, at), shape);
    elementwise_into(op_, std::span<const Tensor>(views_, in_.size()), TensorType{out_.dtype(), shape}, target_, loc_);
    if (scratch_)
      stream_copy(element(out_, at), scratch_,
                  static_cast<size_t>(target_.num_elements()) * dtype_size(out_.dtype()));
  }

  OpKind op_;
  std::span<const Tensor> in_;
  const Layout& layout_;
  Tensor& out_;
  SourceLoc loc_;
  Tensor views_[3];
  Tensor target_;
  void* scratch_;
};

}  // namespace

Tensor elementwise_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& type,
                          SourceLoc loc) {
  (void)attrs;
  Tensor out = make_tensor(type.dtype, type.shape);
  const int64_t n = out.num_elements();
  const Layout l = n >= 2 * kParallelGrain ? layout_of(in, type.shape) : Layout{};
  const int64_t es = static_cast<int64_t>(dtype_size(type.dtype));
  const int64_t piece = std::max<int64_t>(kChunkUnit, kStreamPieceBytes / es);  // a streamed piece's elements
  // A result past the streaming bar is written around the cache, as compiled loops write theirs
  // (docs/jit.md, "Streaming stores"): a cached store first reads the line it overwrites. An
  // outer layout streams runs of whole slices, so only slices no larger than a piece.
  const int64_t slice = l.outer ? n / l.outer : 0;
  const bool stream = l.splits && slice <= piece && past_nontemporal_threshold(n * es);
  if (!l.splits || (!stream && parallel_threads() <= 1)) {
    elementwise_into(op, in, type, out, loc);
    return out;
  }
  if (stream) note_streamed_eager_op();
  if (l.outer) {  // slice >= 1: the result has no 0 dim (n >= 2 * kParallelGrain)
    const int64_t slices_per_piece = std::max<int64_t>(1, piece / slice);
    parallel_for(l.outer, std::max<int64_t>(1, kParallelGrain / slice), [&](int64_t s0, int64_t s1) {
      Pieces pieces(op, in, l, out, stream ? std::min(slices_per_piece, s1 - s0) * slice : 0, loc);
      if (!stream) return pieces.run_outer(s0, s1 - s0);
      for (int64_t s = s0; s < s1; s += slices_per_piece) pieces.run_outer(s, std::min(slices_per_piece, s1 - s));
      store_fence();
    });
    return out;
  }
  if (l.row == 0) {
    parallel_for((n + kChunkUnit - 1) / kChunkUnit, kParallelGrain / kChunkUnit, [&](int64_t b, int64_t e) {
      const int64_t begin = b * kChunkUnit, end = std::min(n, e * kChunkUnit);
      Pieces pieces(op, in, l, out, stream ? std::min(piece, end - begin) : 0, loc);
      if (!stream) return pieces.run(begin, 0, Shape{end - begin});
      for (int64_t p = begin; p < end; p += piece) pieces.run(p, 0, Shape{std::min(piece, end - p)});
      store_fence();  // before the pool's completion flag: it does not order non-temporal stores
    });
    return out;
  }
  // Chunks of whole rows; streamed pieces are segments of a long row, or runs of short rows.
  const int64_t row = l.row, rows_per_piece = std::max<int64_t>(1, piece / row);
  parallel_for(n / row, std::max<int64_t>(1, kParallelGrain / row), [&](int64_t r0, int64_t r1) {
    Pieces pieces(op, in, l, out, !stream ? 0 : row >= piece ? piece : rows_per_piece * row, loc);
    if (!stream) return pieces.run(r0 * row, 0, Shape{r1 - r0, row});
    if (row < piece) {  // runs of whole rows
      for (int64_t r = r0; r < r1; r += rows_per_piece) pieces.run(r * row, 0, Shape{std::min(rows_per_piece, r1 - r), row});
    } else {  // segments of each row
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t p = 0; p < row; p += piece) pieces.run(r * row + p, p, Shape{std::min(piece, row - p)});
    }
    store_fence();
  });
  return out;
}

}  // namespace ag::detail::AG_KERNEL_NS
