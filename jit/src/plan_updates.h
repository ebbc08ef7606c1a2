// Planning rules that spare a copy of a whole buffer (plan_updates.cpp): slice updates computed
// into their box, and While state double-buffered. Used by the planner (plan.cpp).
#pragma once

#include "plan.h"

namespace ag::jit {

// Whether the loop computing value v reads `buffer` (v's operands, or those of the values fused into it).
bool reads_buffer(const Graph& g, const ScopePlan& s, ValueId v, ValueId buffer);

// Whether SliceUpdate `update`'s new box can be computed straight into the update's result: an
// elementwise loop of static shape, read by nothing else.
bool boxable_update(const Graph& g, const ScopePlan& s, uint32_t update);

// In a While body: whether the update of loop variable x = x.at[box].set(v) should not be made in
// place because v reads x (a stencil) — computed into the loop's second buffer instead, v needs
// no temporary and x no copy.
bool prefer_twin_to_in_place(const Graph& g, const ScopePlan& s, uint32_t update, int64_t loop_vars);

// In a While body: whether result k is computed into the loop's second buffer (a loop variable
// of static size held in memory, computed in a buffer of its own in the body).
bool twin_result(const Graph& g, const ScopePlan& s, size_t k, int64_t loop_vars);

// A Concat node's axis, counted from 0.
int64_t concat_axis(const Node& concat);
// Whether each piece of a Concat node is one contiguous run of its result (every dim before the
// axis is 1), laid out there as it would be alone.
bool contiguous_pieces(const Node& concat);

// Makes each boxable update of a destination compute its box in place (storage Box), and each
// boxable piece of a concat (static shapes) its place in the concat's result.
void box_updates(const Graph& g, ScopePlan& s);

// Marks the While outputs whose body delivers into the loop's second buffer (twin_offset 0; the
// arena layout gives the real offset).
void mark_twins(const Graph& g, ScopePlan& s);

}  // namespace ag::jit
