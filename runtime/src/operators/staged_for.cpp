// Staged for loops over a tensor's first dimension: a while loop over a hidden index. A loop
// over ag::range(...) computes its element as start + i * delta instead of indexing the range.
#include <fmt/format.h>

#include <optional>

#include "../ops/internal_ops.h"

#include "ag/operators/control_flow.h"
#include "ag/ops.h"
#include "state_vars.h"

namespace ag::detail {
namespace {

struct RangeParts {
  Tensor start, limit, delta;
};

// When `t` is the result of a Range node in an open frame, its start and delta.
std::optional<RangeParts> range_parts(const Tensor& t) {
  if (!t.is_symbolic() || !detail::impl_of(t)->frame->open) return std::nullopt;
  TraceFrame* f = detail::impl_of(t)->frame->frame;
  const Node& n = f->graph.nodes[detail::impl_of(t)->node];
  if (n.op != OpKind::Range) return std::nullopt;
  return RangeParts{f->symbolic(n.inputs[0]), f->symbolic(n.inputs[1]), f->symbolic(n.inputs[2])};
}

}  // namespace

void staged_for(const Tensor& iterable, int64_t start, FnRef<Tensor()>* extra_test, FnRef<void(Tensor)> body,
                std::span<StateVar> vars, SourceLoc loc) {
  check_readable(iterable, OpKind::Gather, loc);
  if (iterable.rank() == 0) throw ValueError("for: cannot iterate over a scalar tensor" + where(loc));
  const std::optional<RangeParts> range = range_parts(iterable);
  Tensor n;
  if (iterable.shape()[0] >= 0) {
    n = Tensor(iterable.shape()[0]);
  } else if (range && is_integer(range->start.dtype())) {
    // The length of an integer range without materializing it; delta == 0 is a division by
    // zero (InvalidArgumentError), as the Range op itself would report.
    const RangeParts& r = *range;
    const Tensor span = op(OpKind::Add, {op(OpKind::Sub, {r.limit, r.start}, loc), r.delta}, loc);
    const Tensor count = op(OpKind::FloorDiv, {op(OpKind::Sub, {span, op(OpKind::Sign, {r.delta}, loc)}, loc), r.delta}, loc);
    n = cast_to(op(OpKind::Maximum, {count, scalar_like(count, 0)}, loc), DType::Int64, loc);
  } else {
    n = apply_op(OpKind::Gather, {apply_op(OpKind::ShapeOf, {iterable}, Attrs::none(), loc), Tensor(int64_t{0})},
                 Attrs::none(), loc);
  }

  Tensor index(start);
  std::vector<StateVar> all(vars.begin(), vars.end());
  all.push_back(make_state_var(index, "ag__index"));

  auto cond = [&]() -> Tensor {
    Tensor in_range = op(OpKind::Less, {index, n}, loc);
    if (!extra_test) return in_range;
    return op(OpKind::LogicalAnd, {in_range, staged_condition((*extra_test)(), "for loop", loc)}, loc);
  };
  auto step = [&] {
    Tensor elem;
    if (range) {
      elem = op(OpKind::Add, {range->start, op(OpKind::Mul, {cast_to(index, range->start.dtype(), loc), range->delta}, loc)},
                loc);
    } else {
      Attrs axis0;
      elem = apply_op(OpKind::Gather, {iterable, index}, axis0, loc);
    }
    index = op(OpKind::Add, {index, Tensor(int64_t{1})}, loc);
    body(elem);
  };
  staged_while(cond, step, all, loc, "for loop");
}

}  // namespace ag::detail
