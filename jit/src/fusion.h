// The graph-level fusion pass: forms fused groups — loop nests that compute one materialized
// value (the group's root: an elementwise value or a reduction) with the elementwise values that
// feed it evaluated inline per element — so a chain of elementwise/broadcast/cast ops (and the
// producers of a reduction) becomes one loop; a reduction over a few static elements can itself
// be evaluated inline (an inline reduction). Lowering emits each group as one loop nest.
#pragma once

#include <cstdint>
#include <vector>

#include "plan.h"

namespace ag::jit {

// Elementwise ops cheap enough to recompute per element of a loop larger than their own value (a
// broadcast operand): ops.def's Cost column says `cheap` (transcendentals, sqrt and divisions are
// `costly`).
bool is_cheap_to_recompute(OpKind op);
// Whether `n` reads its input `input` element by element through a loop's walk: an elementwise
// op (not FillLike, which reads only the shape), or a reduction of its operand.
bool consumes_elementwise(const Node& n, uint32_t input);
// At most this many recomputed (broadcast) ops per group.
inline constexpr int kMaxRecomputedPerGroup = 4;
// A reduction over at most this many elements (static) may be evaluated inline in its
// consumer's loop, its elements unrolled (n-body's sum over x, y, z).
inline constexpr int64_t kMaxInlineReduction = 8;
// The number of elements each output element of reduction `n` reduces, when the reduction can be
// evaluated inline (at most kMaxInlineReduction, every reduced dim static); else 0.
int64_t inline_reduction_count(const Graph& g, const Node& n);

// An assign_add or assign_sub that computes its operand in a loop of its own over the variable
// (lower_state.cpp, Emitter::update_in_place): the variable's buffer updated element by element
// under its lock, the operand's elementwise producers fused into that loop, no temporary and no
// second pass (an optimizer's `w -= lr * m / (sqrt(v) + eps)`). For a float32/float64/int32/
// int64 variable of static shape and at least kMinInPlaceUpdate elements, and an operand of its
// dtype that broadcasts to it; a scalar counter keeps its helper (agc_rt_var_add_scalar).
inline constexpr int64_t kMinInPlaceUpdate = 16;
bool updates_in_place(const Graph& g, const Node& n);

// Scatters compiled as loops of their own (lower/lower_scatter.cpp) instead of the runtime's
// kernel: TensorScatterUpdate/Add and UnsortedSegmentSum/Max of float32, float64, int32 or int64.
// Their updates' elementwise producers fuse into that loop (its walk is the updates' shape), and
// so does a gather along axis 0 by a vector of indices (fuses_gather): a segment sum of gathered
// values, PageRank's `unsorted_segment_sum(gather(x, src), dst, n)`, is one loop over the edges.
// A base that is a fill (a segment sum's zeros) is written by the scatter's own first loop.
bool compiled_scatter(const Graph& g, const Node& n);
// Whether the input `input` of node `n` is read element by element by a compiled scatter: its
// updates (input 2), or its base (input 0) when `producer` is a fill.
bool scatter_reads_elementwise(const Graph& g, const Node& n, uint32_t input, const Node& producer);
// Whether gather `n` may be evaluated inline in compiled scatter `scatter`'s loop: axis 0, a
// rank-1 index vector, params of at least rank 1, and an output of static shape equal to the
// scatter's updates (or the updates themselves): the loop's index is then the gather's own.
bool fuses_gather(const Graph& g, const Node& n, const Node& scatter);

// `values` holds the storage chosen so far for every value of `g`; values that fuse into their
// consumer become ValueStorage::Fused. Results and register values never fuse. Returns, per node, the
// roots of the groups that evaluate it: for a fused value the group(s) it is computed in (a fill,
// or a cheap expansion, with several consumers is in each of theirs), for a root with fused
// members itself, else none.
std::vector<std::vector<uint32_t>> fuse_elementwise(const Graph& g, std::vector<std::vector<ValuePlan>>& values);

}  // namespace ag::jit
