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

// `values` holds the storage chosen so far for every value of `g`; values that fuse into their
// consumer become ValueStorage::Fused. Results and register values never fuse. Returns, per node, the
// roots of the groups that evaluate it: for a fused value the group(s) it is computed in (a fill,
// or a cheap expansion, with several consumers is in each of theirs), for a root with fused
// members itself, else none.
std::vector<std::vector<uint32_t>> fuse_elementwise(const Graph& g, std::vector<std::vector<ValuePlan>>& values);

}  // namespace ag::jit
