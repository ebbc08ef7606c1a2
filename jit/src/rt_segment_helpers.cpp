// The edge order of a segment sum pulled by segment (segment_pulls.h), built once before its
// staged loop: a stable counting sort of the edges by segment id, each edge placed as a record
// with its fused gathers' indices. Nothing here fails: an id or index out of range clears the
// block's `ok` and describes the error the push would raise, which each iteration raises.
//
// On the thread pool the edges come in parts, each counted and then placed by one thread: part
// p's edges of segment d go after those of parts before p, so the order is the one-thread order
// whatever the number of parts.
#include <algorithm>
#include <atomic>

#include "ag/detail/parallel.h"
#include "call_state.h"
#include "segment_pulls.h"

namespace ag::jit {
namespace {

std::atomic<int64_t> g_orders_built{0};  // with ok = 1
// Each record is a store to a random place of a block larger than the caches: the place of the
// edge this many ahead is fetched meanwhile (near enough: its segment's cursor moves little).
// On this VM, 1M edges placed in 7-8 ms against 13-16 without, on one thread.
constexpr int64_t kPrefetchAhead = 32;
// Edges per part, at least: fewer parts than threads below it.
constexpr int64_t kEdgesPerPart = int64_t{1} << 16;
constexpr int64_t kMaxParts = 8;

struct Job {
  const void* ids;
  bool ids_64;
  int64_t edges, segments, gathers, stride, edge_field, parts;
  const void* const* indices;  // per gather
  const int64_t* info;         // per gather: int64 indices?, rows
  int64_t* counts;             // per part: int64[segments], then its cursors
  int32_t* order;
  std::atomic<bool> ok{true};

  int64_t id(int64_t e) const { return ids_64 ? static_cast<const int64_t*>(ids)[e] : static_cast<const int32_t*>(ids)[e]; }
  int64_t index(int64_t g, int64_t e) const {
    return info[2 * g] ? static_cast<const int64_t*>(indices[g])[e] : static_cast<const int32_t*>(indices[g])[e];
  }
  bool bad_index(int64_t g, int64_t e) const {
    const int64_t r = index(g, e);
    return r < 0 || r >= info[2 * g + 1];
  }
  int64_t begin(int64_t part) const { return edges * part / parts; }
  int64_t* counts_of(int64_t part) const { return counts + part * segments; }

  void count(int64_t part) {
    int64_t* c = counts_of(part);
    std::fill(c, c + segments, int64_t{0});
    for (int64_t e = begin(part), end = begin(part + 1); e < end; ++e) {
      const int64_t d = id(e);
      if (d >= segments) {
        ok.store(false, std::memory_order_relaxed);
        return;
      }
      if (d >= 0) ++c[d];
    }
  }

  // Every edge's gathered indices are checked, those of dropped edges (negative ids) too: the
  // push checks each row's gathers before its id.
  void place(int64_t part) {
    int64_t* cursor = counts_of(part);
    for (int64_t e = begin(part), end = begin(part + 1); e < end; ++e) {
      if (e + kPrefetchAhead < end) {
        const int64_t ahead = id(e + kPrefetchAhead);
        if (ahead >= 0) __builtin_prefetch(order + cursor[ahead] * stride, 1);
      }
      const int64_t d = id(e);
      int32_t* record = d >= 0 ? order + cursor[d]++ * stride : nullptr;
      if (record && edge_field) record[0] = static_cast<int32_t>(e);
      for (int64_t g = 0; g < gathers; ++g) {
        if (bad_index(g, e)) {
          ok.store(false, std::memory_order_relaxed);
          return;
        }
        if (record) record[edge_field + g] = static_cast<int32_t>(index(g, e));
      }
    }
  }
};

// The error the push raises on these edges (lower_scatter.cpp, push_scatter): row by row, each
// gather's index is checked, then the id; at the first bad id, every gather's indices are checked
// in full, in order, before the id's error. Found by a serial scan: the path of bad input only.
void describe_failure(const Job& job, int64_t* header) {
  auto fail = [&](int64_t which, int64_t a, int64_t b) {
    header[1] = which;
    header[2] = a;
    header[3] = b;
  };
  for (int64_t e = 0; e < job.edges; ++e) {
    for (int64_t g = 0; g < job.gathers; ++g)
      if (job.bad_index(g, e)) return fail(g, job.index(g, e), job.info[2 * g + 1]);
    if (job.id(e) < job.segments) continue;
    for (int64_t g = 0; g < job.gathers; ++g)
      for (int64_t f = 0; f < job.edges; ++f)
        if (job.bad_index(g, f)) return fail(g, job.index(g, f), job.info[2 * g + 1]);
    return fail(kSegmentIdFailure, job.id(e), job.segments);
  }
  fail(kSegmentIdFailure, 0, 0);  // not reached: ok was cleared for a reason
}

}  // namespace

int64_t segment_orders_built() { return g_orders_built.load(std::memory_order_relaxed); }

}  // namespace ag::jit

extern "C" {

void* agc_rt_segment_order(ag::jit::JitCallCtx* ctx, const void* ids, int32_t ids_64, int64_t edges, int64_t segments,
                           int64_t gathers, int32_t with_edge, const void* const* gather_indices, const int64_t* gather_info) {
  using namespace ag::jit;
  const SegmentOrderLayout l = segment_order_layout(segments, edges, gathers, with_edge != 0);
  const int64_t parts = std::clamp<int64_t>(std::min<int64_t>(ag::detail::parallel_threads(), edges / kEdgesPerPart), 1, kMaxParts);
  auto* block = static_cast<char*>(try_allocate_owned(*ctx->state, l.bytes + 8 * parts * segments));
  if (!block) return nullptr;  // the code raises the out-of-memory error
  auto* offsets = reinterpret_cast<int64_t*>(block + l.offsets);
  Job job{ids, ids_64 != 0, edges, segments, gathers, l.stride, l.edge_field, parts, gather_indices, gather_info,
          reinterpret_cast<int64_t*>(block + l.bytes), reinterpret_cast<int32_t*>(block + l.order)};
  // Each part counted, the cursors set, each part placed: on the pool, or here.
  auto order = [&](bool pooled) {
    auto each_part = [&](auto&& f) {
      if (!pooled) {
        for (int64_t p = 0; p < parts; ++p) f(p);
        return;
      }
      ag::detail::parallel_for(parts, 1, [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) f(p);
      });
    };
    each_part([&](int64_t p) { job.count(p); });
    if (!job.ok.load(std::memory_order_relaxed)) return;
    // Segment d's edges begin after those of the segments before it; part p's after those of
    // the parts before p: each part's counts become its cursors.
    int64_t next = 0;
    for (int64_t d = 0; d < segments; ++d) {
      offsets[d] = next;
      for (int64_t p = 0; p < parts; ++p) {
        int64_t& c = job.counts_of(p)[d];
        const int64_t n = c;
        c = next;
        next += n;
      }
    }
    offsets[segments] = next;
    each_part([&](int64_t p) { job.place(p); });
  };
  try {
    order(true);
  } catch (...) {  // the pool's threads could not be started: it all runs here
    job.ok.store(true, std::memory_order_relaxed);
    order(false);
  }
  const bool ok = job.ok.load(std::memory_order_relaxed);
  auto* header = reinterpret_cast<int64_t*>(block);
  header[0] = ok ? 1 : 0;
  if (!ok) {
    describe_failure(job, header);
    return block;
  }
  // Chunk c begins at the first segment whose edges begin at or after c / kSegmentChunks of them.
  auto* chunks = reinterpret_cast<int64_t*>(block + l.chunks);
  const int64_t kept = offsets[segments];
  for (int64_t c = 0; c < kSegmentChunks; ++c)
    chunks[c] = std::lower_bound(offsets, offsets + segments, kept * c / kSegmentChunks) - offsets;
  chunks[kSegmentChunks] = segments;
  g_orders_built.fetch_add(1, std::memory_order_relaxed);
  return block;
}

}  // extern "C"
