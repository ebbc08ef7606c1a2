// Segment sums pulled by segment in staged loops. A compiled segment sum (fusion.h,
// compiled_scatter) pushes: for each edge k in order, out[ids[k]] += updates[k] — a random
// read-modify-write per edge, and one thread, since two could add to one segment. In a While body
// whose segment ids (and the indices of the gathers fused into its updates) are loop-invariant
// captures, the edges are ordered by segment once before the loop (agc_rt_segment_order: a stable
// counting sort, negative ids dropped); each iteration then pulls: for each segment d, out[d] =
// base, then += the updates of its edges in their original order — the same additions in the same
// order as the push, so the same bits, with sequential writes and segments split over threads (in
// chunks of about equal edge counts) with the result still the same bits. PageRank's power
// iteration: `unsorted_segment_sum(gather(rank * inv_degree, src), dst, pages)` in a staged loop.
//
// An id past the segments, or a fused gather's index outside its params, makes the order say so
// (ok = 0) and describe the error the push raises (the eager op's); each iteration raises it.
// LLVM-free: the plan marks the pulled segment sums (plan_dump.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "plan.h"

namespace ag::jit {

// Below this many edges a segment sum stays a push: ordering them costs about as much as a few
// iterations, and a small push is cheap.
inline constexpr int64_t kMinPulledEdges = 4096;
// The pull's segments come in this many chunks of about equal edge counts: the thread pool
// splits the chunks (its ranges), each thread's edges about the same whatever the skew of ids.
inline constexpr int64_t kSegmentChunks = 64;

// A segment sum or max of a While body that is pulled.
struct SegmentPull {
  uint32_t node;     // the UnsortedSegmentSum/Max
  size_t ids_param;  // the body parameter (= the While's input) holding its segment ids
  // Its fused gathers, in the order lower_scatter.cpp finds them (outermost first): the gather
  // node and the body parameter holding its indices.
  std::vector<std::pair<uint32_t, size_t>> gathers;
  // Whether its updates read a value at the edge's row besides through the gathers (an edge
  // weight): the order then records each edge.
  bool reads_edges = false;
};

// The segment sums of While body `body` (with `loop_vars` loop variables) pulled by segment: a
// compiled UnsortedSegmentSum or UnsortedSegmentMax of static shapes, at least kMinPulledEdges
// edges, a constant base of one repeated value (the zeros or the lowest value segment ops start
// from), ids of int32 or int64 from a capture, and every gather fused into its updates reading
// indices from a capture and params of a static first dim. In node order.
std::vector<SegmentPull> loop_invariant_segment_pulls(const ScopePlan& body, int64_t loop_vars);

// f(body, node) for each pulled segment sum of a staged loop in `s` and its sub-scopes.
void for_each_segment_pull(const ScopePlan& s, const std::function<void(const Graph& body, uint32_t node)>& f);

// Whether node `n` is a constant whose elements all have the same bytes (a segment sum's zeros,
// folded into a constant for a static shape).
bool is_splat_constant(const Node& n);

// The block agc_rt_segment_order returns, in bytes from its start: a header of int64s — `ok`
// (1: every id below the segments and every fused gather's index inside its params), and when it
// is 0 the error the push would raise: which (kSegmentIdFailure, or the fused gather's number),
// and the two values of its message (the index and the dim) — then the segments' first
// edges (int64[segments + 1]: offsets[d] .. offsets[d + 1] are segment d's edges, in the order),
// the chunks' first segments (int64[kSegmentChunks + 1]), then the order: per edge of a
// non-negative id, by segment, each segment's in their original order, a record of int32s — the
// edge (when the updates read anything at the edge's row besides the gathers), then each fused
// gather's index at that edge: one record written by one random store per edge when the edges
// are placed, read in sequence by the pull. The helper's scratch (each part's counts) follows.
inline constexpr int64_t kSegmentIdFailure = -1;
struct SegmentOrderLayout {
  int64_t offsets = 0, chunks = 0, order = 0;
  int64_t edge_field = 0;  // 1: a record begins with its edge
  int64_t stride = 1;      // int32s per record
  int64_t bytes = 0;       // up to the scratch
};
inline SegmentOrderLayout segment_order_layout(int64_t segments, int64_t edges, int64_t gathers, bool with_edge) {
  auto round_up = [](int64_t b) { return (b + 63) / 64 * 64; };
  SegmentOrderLayout l;
  l.offsets = 64;
  l.chunks = l.offsets + round_up(8 * (segments + 1));
  l.order = l.chunks + round_up(8 * (kSegmentChunks + 1));
  l.edge_field = with_edge || gathers == 0 ? 1 : 0;
  l.stride = l.edge_field + gathers;
  l.bytes = l.order + round_up(4 * l.stride * edges);
  return l;
}

// The orders built with ok = 1 in this process (the pull's tests: it ran).
int64_t segment_orders_built();

}  // namespace ag::jit
