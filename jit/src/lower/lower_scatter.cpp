// Scatters as compiled loops (fusion.h, compiled_scatter): tensor_scatter_nd_update/add and
// unsorted_segment_sum/max. The base is copied (or, a fill, written) into the result, then each
// row k of the updates is combined into row indices[k], in k's order as the eager kernel does
// (runtime/src/ops/index/index_kernels.cpp, scatter_rows): the same values bit for bit. The
// updates are evaluated per element inside that loop, their elementwise producers and a gather
// by a vector of indices fused: PageRank's `unsorted_segment_sum(gather(rank, src), dst, n)`
// reads each edge's two indices and one rank and adds, where the runtime's kernel read a
// gathered copy written by a loop of its own.
#include <algorithm>
#include <cstring>

#include "../fusion.h"
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
  const Node& n = s.graph().nodes[v.node];
  if (n.op != OpKind::Const || s.at(v).kind != LVal::Kind::Buf) return false;
  const Tensor& value = n.attrs.value;
  const size_t bytes = dtype_size(value.dtype());
  const auto* data = static_cast<const unsigned char*>(detail::impl_of(value)->data);
  for (int64_t k = 1; k < value.num_elements(); ++k)
    if (std::memcmp(data, data + static_cast<size_t>(k) * bytes, bytes) != 0) return false;
  return true;
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
  const DType d = n.outputs[0].dtype;
  const int32_t id = s.node_id(i);
  const LVal& base = s.at(n.inputs[0]);
  const LVal& indices = s.at(n.inputs[1]);
  const ValueId updates = n.inputs[2];
  LVal out;
  out.kind = LVal::Kind::Buf;
  out.dtype = d;
  out.dims = base.dims;
  out.ptr = result_buffer(s, i, out.dims);
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
  const auto* static_width = row_dims.size() == 1 ? llvm::dyn_cast<llvm::ConstantInt>(row_dims[0]) : nullptr;
  const int64_t width = static_width ? static_width->getSExtValue() : 0;
  const unsigned lanes = static_cast<unsigned>(vector_width() / static_cast<int>(dtype_size(d)));
  const bool vector_rows = is_floating(d) && width > 0 && lanes > 1 && width % lanes == 0 && vectorizable(s, updates, d);
  auto combine = [&](llvm::Value* old, llvm::Value* x) -> llvm::Value* {
    if (n.op == OpKind::TensorScatterUpdate) return x;
    if (n.op == OpKind::UnsortedSegmentMax) {
      // As the eager kernel: the larger one, and a NaN update propagates.
      llvm::Value* take = is_floating(d) ? b_.CreateOr(b_.CreateFCmpOGT(x, old), b_.CreateFCmpUNO(x, x)) : b_.CreateICmpSGT(x, old);
      return b_.CreateSelect(take, x, old);
    }
    return is_floating(d) ? b_.CreateFAdd(old, x) : b_.CreateAdd(old, x);  // IEEE, integers wrap: as eager
  };
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
          b_.CreateAlignedStore(combine(old, x), ptr, align);
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
        store(d, out.ptr, offset, combine(old, x));
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
  finish_result(s, i, out, out.ptr);
}

}  // namespace ag::jit
