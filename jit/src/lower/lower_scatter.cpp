// Scatters as compiled loops (fusion.h, compiled_scatter): tensor_scatter_nd_update/add and
// unsorted_segment_sum/max. The base is copied (or, a fill, written) into the result, then each
// row k of the updates is combined into row indices[k], in k's order as the eager kernel does
// (runtime/src/ops/index/index_kernels.cpp, scatter_rows): the same values bit for bit. The
// updates are evaluated per element inside that loop, their elementwise producers and a gather
// by a vector of indices fused: PageRank's `unsorted_segment_sum(gather(rank, src), dst, n)`
// reads each edge's two indices and one rank and adds, where the runtime's kernel read a
// gathered copy written by a loop of its own.
//
// A segment sum of a staged loop whose ids are loop-invariant pulls instead (segment_pulls.h,
// pull_by_segment): each segment from its edges, in an edge order made before the loop, which
// also found any bad id or index and describes the push's error.
#include <algorithm>
#include <cstring>

#include "../fusion.h"
#include "../segment_pulls.h"
#include "ag/detail/tensor_impl.h"
#include "emitter.h"

namespace ag::jit {
namespace {

// Element j of a rank-1 value (a register when it has one element).
llvm::Value* element_of(Emitter& e, const LVal& v, llvm::Value* j) {
  if (v.kind == LVal::Kind::Reg) return v.reg;
  if (v.kind != LVal::Kind::Buf) throw InternalError("jit: a scatter's or gather's indices without a buffer");
  return e.load(v.dtype, v.ptr, v.strides.empty() ? j : e.b().CreateMul(j, v.strides[0]));
}

// Whether index `idx` is outside [0, dim) (i64).
llvm::Value* out_of_range(llvm::IRBuilder<>& b, llvm::Value* idx, llvm::Value* dim) {
  return b.CreateOr(b.CreateICmpSLT(idx, b.getInt64(0)), b.CreateICmpSGE(idx, dim));
}

// The fused gathers in value v's expression (the updates of a scatter), outermost first.
void fused_gathers(Scope& s, ValueId v, std::vector<ValueId>& out) {
  const LVal& lv = s.at(v);
  if (lv.kind != LVal::Kind::Fused || lv.inline_reduction || lv.counter) return;
  const Node& n = s.graph().nodes[v.node];
  if (n.op == OpKind::Gather) {
    out.push_back(v);
    return;
  }
  if (n.op != OpKind::FillLike)
    for (ValueId in : n.inputs) fused_gathers(s, in, out);
}

// Whether value `v` is a constant of one repeated element (a segment sum's zeros, folded into a
// constant for a static shape): the scatter writes that element instead of copying the buffer.
bool splat_constant(Scope& s, ValueId v) {
  return s.at(v).kind == LVal::Kind::Buf && is_splat_constant(s.graph().nodes[v.node]);
}

// How a scatter combines an update x into the element it holds: as the eager kernel does.
llvm::Value* combine(llvm::IRBuilder<>& b, OpKind op, DType d, llvm::Value* old, llvm::Value* x) {
  if (op == OpKind::TensorScatterUpdate) return x;
  if (op == OpKind::UnsortedSegmentMax) {
    // The larger one, and a NaN update propagates.
    llvm::Value* take = is_floating(d) ? b.CreateOr(b.CreateFCmpOGT(x, old), b.CreateFCmpUNO(x, x)) : b.CreateICmpSGT(x, old);
    return b.CreateSelect(take, x, old);
  }
  return is_floating(d) ? b.CreateFAdd(old, x) : b.CreateAdd(old, x);  // IEEE, integers wrap: as eager
}

// A scatter's rows of a static width in whole vector registers, of a float expression with a
// vector form: the width (0 when they are not).
int64_t vector_row_width(Emitter& e, Scope& s, ValueId updates, const std::vector<llvm::Value*>& row_dims, DType d) {
  const auto* static_width = row_dims.size() == 1 ? llvm::dyn_cast<llvm::ConstantInt>(row_dims[0]) : nullptr;
  const int64_t width = static_width ? static_width->getSExtValue() : 0;
  const unsigned lanes = static_cast<unsigned>(e.vector_width() / static_cast<int>(dtype_size(d)));
  return is_floating(d) && width > 0 && lanes > 1 && width % lanes == 0 && e.vectorizable(s, updates, d) ? width : 0;
}

}  // namespace

llvm::Value* Emitter::gather_row(Scope& s, ValueId v) const {
  const auto known = std::find_if(gather_rows_.begin(), gather_rows_.end(), [&](const auto& r) { return r.first == &s.at(v); });
  if (known == gather_rows_.end()) throw InternalError("jit: a fused gather read outside its scatter's row loop");
  return known->second;
}

llvm::Value* Emitter::eval_gather(Scope& s, ValueId v, const std::vector<llvm::Value*>& idx) {
  const Node& n = s.graph().nodes[v.node];
  const LVal& params = s.at(n.inputs[0]);
  if (params.kind != LVal::Kind::Buf || idx.size() != params.dims.size())
    throw InternalError("jit: a fused gather whose params are not a buffer of its loop's rank");
  // idx walks the gather's output [K, params' dims after the first]: row idx[0] of the index
  // vector picks the params' row (loaded and checked by the scatter's row loop), the rest index
  // within it.
  llvm::Value* row = gather_row(s, v);
  const std::vector<llvm::Value*> strides = params.strides.empty() ? contiguous_strides(params.dims) : params.strides;
  std::vector<llvm::Value*> at = idx;
  at[0] = row;
  return load(params.dtype, params.ptr, linear_offset(strides, at));
}

bool Emitter::gather_vectorizable(Scope& s, ValueId v, DType d) const {
  const LVal& params = s.at(s.graph().nodes[v.node].inputs[0]);
  return params.kind == LVal::Kind::Buf && params.dtype == d && params.strides.empty() && params.dims.size() == 2;
}

llvm::Value* Emitter::eval_gather_vector(Scope& s, ValueId v, llvm::Value* base, unsigned lanes, llvm::Value* mask) {
  const LVal& params = s.at(s.graph().nodes[v.node].inputs[0]);
  if (params.dims.size() != 2) throw InternalError("jit: a fused gather's vector rows with params not of rank 2");
  llvm::Type* et = mem_type(params.dtype);
  llvm::Type* vt = llvm::FixedVectorType::get(et, lanes);
  llvm::Value* ptr = b_.CreateInBoundsGEP(et, params.ptr, b_.CreateAdd(b_.CreateMul(gather_row(s, v), params.dims[1]), base));
  const llvm::Align align(dtype_size(params.dtype));
  if (mask) return b_.CreateMaskedLoad(vt, ptr, align, mask, llvm::Constant::getNullValue(vt));
  return b_.CreateAlignedLoad(vt, ptr, align);
}

void Emitter::describe_fused_gather(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const LVal& params = s.at(n.inputs[0]);
  const LVal& indices = s.at(n.inputs[1]);
  LVal out;
  out.kind = LVal::Kind::Fused;
  out.dtype = n.outputs[0].dtype;
  out.dims = indices.dims;
  out.dims.insert(out.dims.end(), params.dims.begin() + 1, params.dims.end());
  s.values[i] = {out};
}

void Emitter::lower_scatter(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  LVal out;
  out.kind = LVal::Kind::Buf;
  out.dtype = n.outputs[0].dtype;
  out.dims = s.at(n.inputs[0]).dims;
  out.ptr = result_buffer(s, i, out.dims);
  const auto order = std::find_if(s.segment_orders.begin(), s.segment_orders.end(), [&](const auto& o) { return o.node == i; });
  if (order == s.segment_orders.end()) push_scatter(s, i, out);
  else pull_by_segment(s, i, out, *order);
  finish_result(s, i, out, out.ptr);
}

void Emitter::push_scatter(Scope& s, uint32_t i, const LVal& out) {
  const Node& n = s.graph().nodes[i];
  const DType d = n.outputs[0].dtype;
  const int32_t id = s.node_id(i);
  const LVal& base = s.at(n.inputs[0]);
  const LVal& indices = s.at(n.inputs[1]);
  const ValueId updates = n.inputs[2];
  // The base: a fill written by a loop of its own (a segment sum's zeros), else copied.
  if (splat_constant(s, n.inputs[0])) {
    const Tensor& value = s.graph().nodes[n.inputs[0].node].attrs.value;
    llvm::Value* element = constant(d, detail::element_as_double(value, 0), detail::element_as_int(value, 0));
    parallel_loop_nest({numel(out.dims)}, {out.ptr}, [&](const std::vector<llvm::Value*>& idx) { store(d, out.ptr, idx[0], element); });
  } else if (base.kind == LVal::Kind::Fused) {
    std::vector<const LVal*> leaves;
    collect_leaves(s, n.inputs[0], leaves);
    leaves.push_back(&out);
    const Walk w = make_walk(out.dims, leaves, /*collapse=*/true);
    parallel_loop_nest(w.dims, {out.ptr}, [&](const std::vector<llvm::Value*>& idx) {
      store(d, out.ptr, linear_offset(*w.find(&out), idx), eval_element(s, n.inputs[0], w, idx));
    });
  } else {
    copy_value(base, out.ptr);
  }

  // The updates' walk, dims uncollapsed: a loop over the update rows, and in it one over the
  // elements of a row (none when the rows are empty: their indices are checked all the same).
  std::vector<const LVal*> leaves;
  collect_leaves(s, updates, leaves);
  const Walk w = make_walk(s.at(updates).dims, leaves, /*collapse=*/false);
  const std::vector<llvm::Value*> out_strides = contiguous_strides(out.dims);
  const std::vector<llvm::Value*> row_dims(w.dims.begin() + 1, w.dims.end());
  llvm::Value* rows = out.dims[0];
  const bool segments = n.op == OpKind::UnsortedSegmentSum || n.op == OpKind::UnsortedSegmentMax;
  std::vector<ValueId> gathers;
  fused_gathers(s, updates, gathers);
  // A gather's index error anywhere comes before the scatter's, as eagerly (the gathered values
  // exist before the scatter runs): on the scatter's error path, every fused gather's indices
  // are checked first.
  auto fail_scatter = [&](llvm::Value* row) {
    exit_if(out_of_range(b_, row, rows), "fail", [&] {
      for (ValueId g : gathers) {
        const Node& gn = s.graph().nodes[g.node];
        const LVal& gi = s.at(gn.inputs[1]);
        llvm::Value* dim = s.at(gn.inputs[0]).dims[0];
        loop(gi.dims[0], [&](llvm::Value* j) {
          llvm::Value* r = b_.CreateSExt(element_of(*this, gi, j), b_.getInt64Ty());
          fail_if(out_of_range(b_, r, dim), s.node_id(g.node), FailKind::GatherIndex, r, dim);
        });
      }
      b_.CreateCall(runtime("agc_rt_fail"), {ctx(), i32(id), i32(static_cast<int32_t>(FailKind::ScatterIndex)), row, rows});
    });
  };
  // Rows of a static width in whole vector registers, of a float expression with a vector form:
  // each block of a row one vector load of the updates (a gathered row's block a plain load),
  // one of the result, the combination and a store, with the scalar loop's values lane by lane
  // (the same operations, uncontracted). LLVM vectorized the scalar row itself, but behind
  // run-time overlap checks of the result against every operand on every row: a GCN step's two
  // segment sums over rows of 16 floats took 2.6x the time of a hand-written loop's.
  const int64_t width = vector_row_width(*this, s, updates, row_dims, d);
  const unsigned lanes = static_cast<unsigned>(vector_width() / static_cast<int>(dtype_size(d)));
  const bool vector_rows = width > 0;
  loop(w.dims[0], [&](llvm::Value* j) {
    // This row of every fused gather, checked once (eval_gather reads it from gather_rows_).
    for (ValueId g : gathers) {
      const Node& gn = s.graph().nodes[g.node];
      llvm::Value* dim = s.at(gn.inputs[0]).dims[0];
      llvm::Value* r = b_.CreateSExt(element_of(*this, s.at(gn.inputs[1]), j), b_.getInt64Ty());
      fail_if(out_of_range(b_, r, dim), s.node_id(g.node), FailKind::GatherIndex, r, dim);
      gather_rows_.emplace_back(&s.at(g), r);
    }
    llvm::Value* row = b_.CreateSExt(element_of(*this, indices, j), b_.getInt64Ty());
    auto scatter_row = [&] {
      fail_scatter(row);
      if (vector_rows) {
        llvm::Type* et = mem_type(d);
        llvm::Type* vt = llvm::FixedVectorType::get(et, lanes);
        const llvm::Align align(dtype_size(d));
        loop(i64(width / lanes), [&](llvm::Value* block) {
          std::vector<std::pair<const LVal*, llvm::Value*>> loaded;
          llvm::Value* base = b_.CreateMul(block, i64(lanes));
          llvm::Value* x = eval_vector(s, updates, w, {j}, base, lanes, nullptr, loaded);
          llvm::Value* ptr = b_.CreateInBoundsGEP(et, out.ptr, b_.CreateAdd(b_.CreateMul(row, i64(width)), base));
          llvm::Value* old = n.op == OpKind::TensorScatterUpdate ? nullptr : b_.CreateAlignedLoad(vt, ptr, align);
          b_.CreateAlignedStore(combine(b_, n.op, d, old, x), ptr, align);
        });
        return;
      }
      loop_nest(row_dims, [&](const std::vector<llvm::Value*>& rest) {
        std::vector<llvm::Value*> idx{j};
        idx.insert(idx.end(), rest.begin(), rest.end());
        llvm::Value* x = eval_element(s, updates, w, idx);
        idx[0] = row;
        llvm::Value* offset = linear_offset(out_strides, idx);
        llvm::Value* old = n.op == OpKind::TensorScatterUpdate ? nullptr : load(d, out.ptr, offset);
        store(d, out.ptr, offset, combine(b_, n.op, d, old, x));
      });
    };
    // Segment ops drop negative ids (TensorFlow's); the others raise on them.
    if (segments) {
      if_then(b_.CreateICmpSGE(row, i64(0)), scatter_row);
    } else {
      scatter_row();
    }
    gather_rows_.resize(gather_rows_.size() - gathers.size());
  });
}

// Chunks of segments over the thread pool; in a chunk each segment d from the base value, its
// edges k in the order's range [offsets[d], offsets[d + 1]) combined in turn: the updates of the
// edge in record k, a fused gather reading its row from the record (checked before the loop). A
// scalar row, or a row of up to four vector registers, accumulates in registers and is stored
// once; wider rows in the result.
void Emitter::pull_by_segment(Scope& s, uint32_t i, const LVal& out, const Scope::SegmentOrder& order) {
  const Node& n = s.graph().nodes[i];
  const DType d = n.outputs[0].dtype;
  const ValueId updates = n.inputs[2];
  const TensorType& updates_type = s.type(updates);
  const int64_t segments = n.outputs[0].shape[0], edges = updates_type.shape[0];
  std::vector<ValueId> gathers;
  fused_gathers(s, updates, gathers);
  std::vector<int64_t> fields;  // per fused gather: its field in an edge's record
  for (ValueId g : gathers) {
    const auto k = std::find(order.gathers.begin(), order.gathers.end(), g.node);
    if (k == order.gathers.end()) throw InternalError("jit: a pulled segment sum's gather without its ordered indices");
    fields.push_back(k - order.gathers.begin());
  }
  const SegmentOrderLayout layout = segment_order_layout(segments, edges, static_cast<int64_t>(order.gathers.size()), order.with_edge);
  auto part = [&](int64_t offset) { return b_.CreateInBoundsGEP(b_.getInt8Ty(), order.block, i64(offset)); };
  llvm::Value* offsets = part(layout.offsets);
  llvm::Value* chunks = part(layout.chunks);
  llvm::Value* records = part(layout.order);
  // Bad ids or indices: the error the push raises, described by the order (each iteration).
  exit_if(b_.CreateICmpNE(load(DType::Int64, order.block, i64(0)), i64(1)), "segments.fail", [&] {
    llvm::Value* which = load(DType::Int64, order.block, i64(1));
    llvm::Value* node = i32(s.node_id(i));
    llvm::Value* kind = i32(static_cast<int32_t>(FailKind::ScatterIndex));
    for (size_t k = 0; k < order.gathers.size(); ++k) {
      llvm::Value* gather = b_.CreateICmpEQ(which, i64(static_cast<int64_t>(k)));
      node = b_.CreateSelect(gather, i32(s.node_id(order.gathers[k])), node);
      kind = b_.CreateSelect(gather, i32(static_cast<int32_t>(FailKind::GatherIndex)), kind);
    }
    b_.CreateCall(runtime("agc_rt_fail"), {ctx(), node, kind, load(DType::Int64, order.block, i64(2)), load(DType::Int64, order.block, i64(3))});
  });
  const Tensor& base_value = s.graph().nodes[n.inputs[0].node].attrs.value;
  llvm::Value* base = constant(d, detail::element_as_double(base_value, 0), detail::element_as_int(base_value, 0));

  std::vector<const LVal*> leaves;
  collect_leaves(s, updates, leaves);
  const Walk w = make_walk(s.at(updates).dims, leaves, /*collapse=*/false);
  const std::vector<llvm::Value*> row_dims(w.dims.begin() + 1, w.dims.end());
  const std::vector<llvm::Value*> out_strides = contiguous_strides(out.dims);
  const int64_t width = vector_row_width(*this, s, updates, row_dims, d);
  const unsigned lanes = static_cast<unsigned>(vector_width() / static_cast<int>(dtype_size(d)));
  const int64_t row_vectors = width > 0 ? width / lanes : 0;
  int64_t row_elements = 1;
  for (int64_t j = 1; j < updates_type.shape.rank(); ++j) row_elements *= updates_type.shape[j];

  // Edge k of the order: its updates row, and each fused gather's row, from its record.
  auto edge_at = [&](llvm::Value* k) {
    llvm::Value* record = b_.CreateMul(k, i64(layout.stride));
    for (size_t g = 0; g < gathers.size(); ++g)
      gather_rows_.emplace_back(&s.at(gathers[g]), b_.CreateSExt(load(DType::Int32, records, b_.CreateAdd(record, i64(layout.edge_field + fields[g]))),
                                                               b_.getInt64Ty()));
    // Without an edge field nothing reads at the edge's row but the gathers: any row will do.
    return layout.edge_field ? b_.CreateSExt(load(DType::Int32, records, record), b_.getInt64Ty()) : i64(0);
  };
  auto edge_done = [&] { gather_rows_.resize(gather_rows_.size() - gathers.size()); };
  auto segment = [&](llvm::Value* seg) {
    llvm::Value* first = load(DType::Int64, offsets, seg);
    llvm::Value* count = b_.CreateSub(load(DType::Int64, offsets, b_.CreateAdd(seg, i64(1))), first);
    if (row_dims.empty()) {
      llvm::Value* sum = loop_reduce(count, base, [&](llvm::Value* acc, llvm::Value* kk) {
        llvm::Value* e = edge_at(b_.CreateAdd(first, kk));
        llvm::Value* x = eval_element(s, updates, w, {e});
        edge_done();
        return combine(b_, n.op, d, acc, x);
      });
      store(d, out.ptr, seg, sum);
      return;
    }
    if (row_vectors > 0 && row_vectors <= 4) {
      const std::vector<llvm::Value*> init(static_cast<size_t>(row_vectors), b_.CreateVectorSplat(lanes, base));
      const std::vector<llvm::Value*> sums = loop_carry(count, init, [&](const std::vector<llvm::Value*>& acc, llvm::Value* kk) {
        llvm::Value* e = edge_at(b_.CreateAdd(first, kk));
        std::vector<llvm::Value*> next;
        for (int64_t v = 0; v < row_vectors; ++v) {
          std::vector<std::pair<const LVal*, llvm::Value*>> loaded;  // this block's loads
          next.push_back(combine(b_, n.op, d, acc[static_cast<size_t>(v)], eval_vector(s, updates, w, {e}, i64(v * lanes), lanes, nullptr, loaded)));
        }
        edge_done();
        return next;
      }, "segment");
      const llvm::Align align(dtype_size(d));
      for (int64_t v = 0; v < row_vectors; ++v)
        b_.CreateAlignedStore(sums[static_cast<size_t>(v)],
                              b_.CreateInBoundsGEP(mem_type(d), out.ptr, b_.CreateAdd(b_.CreateMul(seg, i64(width)), i64(v * lanes))), align);
      return;
    }
    auto at_row = [&](const std::vector<llvm::Value*>& rest) {
      std::vector<llvm::Value*> idx{seg};
      idx.insert(idx.end(), rest.begin(), rest.end());
      return linear_offset(out_strides, idx);
    };
    loop_nest(row_dims, [&](const std::vector<llvm::Value*>& rest) { store(d, out.ptr, at_row(rest), base); });
    loop(count, [&](llvm::Value* kk) {
      llvm::Value* e = edge_at(b_.CreateAdd(first, kk));
      loop_nest(row_dims, [&](const std::vector<llvm::Value*>& rest) {
        std::vector<llvm::Value*> idx{e};
        idx.insert(idx.end(), rest.begin(), rest.end());
        llvm::Value* x = eval_element(s, updates, w, idx);
        llvm::Value* offset = at_row(rest);
        store(d, out.ptr, offset, combine(b_, n.op, d, load(d, out.ptr, offset), x));
      });
      edge_done();
    });
  };
  parallel_loop_nest({i64(kSegmentChunks)}, {out.ptr}, [&](const std::vector<llvm::Value*>& idx) {
    llvm::Value* from = load(DType::Int64, chunks, idx[0]);
    llvm::Value* to = load(DType::Int64, chunks, b_.CreateAdd(idx[0], i64(1)));
    loop(b_.CreateSub(to, from), [&](llvm::Value* j) { segment(b_.CreateAdd(from, j)); });
  }, i64(std::max<int64_t>(1, (edges * row_elements + segments) / kSegmentChunks)));
}

}  // namespace ag::jit
