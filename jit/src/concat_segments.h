// Elementwise ops over concatenations, computed segment by segment. A periodic stencil rolls
// its grid, `concat({x(Slice{1}), x(Slice{none, 1})}, 0)`, and combines the rolls elementwise:
//
//   dx = (roll(x, -1) - roll(x, 2)) * roll(x, 1) - x + F        (Lorenz-96)
//
// Staged as written, each roll copies the grid into a buffer of its own before the loop that
// reads it. Elementwise ops commute with slicing, so an elementwise op reading concatenations
// along an axis is the concatenation of the same op over the segments between their pieces'
// boundaries, each reading the pieces (slices of x: views) in place:
//
//   dx = concat({f(x[1], x[-1], x[0], x[0]), f(x[2], x[0], x[1], x[1]), ..., f(...)}, 0)
//
// and the fused loops of each segment write straight into the result's buffer (the planner
// computes a concat's pieces in place: plan_updates.h, box_updates). Exact: the same ops on the
// same elements. Only static shapes, at most kMaxSegments segments, ops that cannot raise (the
// segments run in another order than the whole would). Plan-time only (plan_program), like
// per_element_loops.h: the graph the Function keeps, and the interpreter, are unchanged.
#pragma once

#include <memory>

#include "ag/graph/graph.h"

namespace ag::jit {

constexpr int64_t kMaxSegments = 8;       // along one axis
constexpr int64_t kMaxTotalSegments = 16; // of an op, cut along several axes

// `g` with each elementwise op over concatenations computed segment by segment (and what that
// leaves unread pruned), or `g` itself when there is none.
std::shared_ptr<const Graph> compute_concats_by_segments(std::shared_ptr<const Graph> g);

}  // namespace ag::jit
