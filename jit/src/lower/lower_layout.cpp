// Layout ops. Reshape, expand_dims, squeeze and identity are views (new dims, same buffer);
// transpose, concat, slice and gather copy with index arithmetic; shape_of reads the dims.
#include "emitter.h"

#include <algorithm>

namespace ag::jit {
namespace {

size_t normalized(int64_t axis, size_t rank) {
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

}  // namespace

// Finishes a node whose result is `v` with new dims: a view, a register, or (when the plan gave
// it a buffer of its own) a copy.
void Emitter::finish_view(Scope& s, uint32_t i, const LVal& in, std::vector<llvm::Value*> dims) {
  LVal out;
  out.dtype = s.graph().nodes[i].outputs[0].dtype;
  out.dims = std::move(dims);
  const ValueStorage st = s.plan->values[i][0].storage;
  if (st == ValueStorage::Reg) {
    out.kind = LVal::Kind::Reg;
    out.reg = as_register(in);
  } else if (st == ValueStorage::View) {
    out.kind = LVal::Kind::Buf;
    out.ptr = in.ptr;
  } else {
    out.kind = LVal::Kind::Buf;
    out.ptr = allocate_value(s, {i, 0}, out.dims);
    copy_value(in, out.ptr);
  }
  s.values[i] = {out};
}

void Emitter::lower_layout(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const TensorType& t = n.outputs[0];
  const int32_t id = s.node_id(i);
  if (t.dtype == DType::List) {  // Identity of a TensorArray handle
    const LVal& in = s.at(n.inputs[0]);
    LVal out = in;
    out.slot = s.plan->values[i][0].slot;
    b_.CreateCall(runtime("agc_rt_slot_copy"),
                  {ctx_, i32(in.slot), i32(out.slot), i32(program().nodes[id].consume & 1 ? 1 : 0)});
    s.values[i] = {out};
    return;
  }
  const LVal& in = n.inputs.empty() ? LVal{} : s.at(n.inputs[0]);
  switch (n.op) {
    case OpKind::Identity:
    case OpKind::StopGradient: return finish_view(s, i, in, in.dims);
    case OpKind::Reshape: {
      std::vector<llvm::Value*> dims;
      llvm::Value* known = i64(1);
      int64_t unknown = -1;
      for (int64_t k = 0; k < n.attrs.shape.rank(); ++k) {
        if (n.attrs.shape[k] == -1) {
          unknown = k;
          dims.push_back(nullptr);
          continue;
        }
        dims.push_back(i64(n.attrs.shape[k]));
        known = b_.CreateMul(known, dims.back());
      }
      llvm::Value* total = numel(in.dims);
      if (unknown >= 0) {
        llvm::Value* safe = b_.CreateSelect(b_.CreateICmpEQ(known, i64(0)), i64(1), known);
        fail_if(b_.CreateOr(b_.CreateICmpEQ(known, i64(0)), b_.CreateICmpNE(b_.CreateSRem(total, safe), i64(0))), id,
                FailKind::Reshape, total, known);
        dims[static_cast<size_t>(unknown)] = t.shape[unknown] >= 0 ? i64(t.shape[unknown]) : b_.CreateSDiv(total, safe);
      } else {
        fail_if(b_.CreateICmpNE(total, known), id, FailKind::Reshape, total, known);
      }
      return finish_view(s, i, in, dims);
    }
    case OpKind::EnsureShape: {  // a view whose known dims are checked
      std::vector<llvm::Value*> dims = in.dims;
      for (size_t k = 0; k < dims.size(); ++k)
        if (const int64_t want = n.attrs.shape[static_cast<int64_t>(k)]; want >= 0) {
          fail_if(b_.CreateICmpNE(dims[k], i64(want)), id, FailKind::EnsureShape, dims[k], i64(static_cast<int64_t>(k)));
          dims[k] = i64(want);
        }
      return finish_view(s, i, in, dims);
    }
    case OpKind::ExpandDims: {
      std::vector<llvm::Value*> dims = in.dims;
      dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(normalized(n.attrs.axis, in.dims.size() + 1)), i64(1));
      return finish_view(s, i, in, dims);
    }
    case OpKind::Squeeze: {
      std::vector<llvm::Value*> dims;  // axes() lists exactly the dims to remove
      for (size_t k = 0; k < in.dims.size(); ++k) {
        if (std::find(n.attrs.axes().begin(), n.attrs.axes().end(), static_cast<int64_t>(k)) != n.attrs.axes().end()) {
          fail_if(b_.CreateICmpNE(in.dims[k], i64(1)), id, FailKind::Squeeze, in.dims[k]);
          continue;
        }
        dims.push_back(in.dims[k]);
      }
      return finish_view(s, i, in, dims);
    }
    case OpKind::ShapeOf: {
      LVal out;
      out.dtype = DType::Int64;
      out.dims = {i64(static_cast<int64_t>(in.dims.size()))};
      if (s.plan->values[i][0].storage == ValueStorage::Reg) {
        out.kind = LVal::Kind::Reg;
        out.reg = in.dims[0];
      } else {
        out.kind = LVal::Kind::Buf;
        out.ptr = allocate_value(s, {i, 0}, out.dims);
        for (size_t k = 0; k < in.dims.size(); ++k) store(DType::Int64, out.ptr, i64(static_cast<int64_t>(k)), in.dims[k]);
      }
      s.values[i] = {out};
      return;
    }
    case OpKind::Transpose: return lower_transpose(s, i);
    case OpKind::Concat: return lower_concat(s, i);
    case OpKind::Slice: return lower_slice(s, i);
    case OpKind::Gather: return lower_gather(s, i);
    default: break;
  }
  throw InternalError("jit: no lowering for " + std::string(op_name(n.op)));
}

namespace {

// Whether a transpose whose output walk reads the input `stride` elements apart gains from
// tiles: always when the stride is a page or more (every read of a column a line of its own in
// one cache set) or the input is larger than an L2 cache (walking the output in order reads it
// once per output row); a small input read with a short stride stays in L2 and the plain walk
// ran as fast as Eigen's, the tiles several times slower (docs/performance.md, "Measured
// decisions": tiled transpose).
bool worth_tiling(llvm::Value* stride, const std::vector<llvm::Value*>& in_dims, size_t element_bytes) {
  constexpr int64_t kPageBytes = 4096, kL2Bytes = int64_t{1} << 20;
  auto* s = llvm::dyn_cast<llvm::ConstantInt>(stride);
  if (!s || s->getSExtValue() * static_cast<int64_t>(element_bytes) >= kPageBytes) return true;
  int64_t bytes = static_cast<int64_t>(element_bytes);
  for (llvm::Value* d : in_dims) {
    auto* c = llvm::dyn_cast<llvm::ConstantInt>(d);
    if (!c) return true;
    bytes *= c->getSExtValue();
  }
  return bytes > kL2Bytes;
}

}  // namespace

void Emitter::lower_transpose(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const LVal in = as_buffer(s.at(n.inputs[0]));
  const std::vector<llvm::Value*> in_strides = contiguous_strides(in.dims);
  LVal out;
  out.dtype = in.dtype;
  std::vector<llvm::Value*> src_strides;
  for (int64_t p : n.attrs.perm()) {
    out.dims.push_back(in.dims[static_cast<size_t>(p)]);
    src_strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  if (s.plan->values[i][0].storage == ValueStorage::Reg) return finish_view(s, i, in, out.dims);
  out.kind = LVal::Kind::Buf;
  out.ptr = allocate_value(s, {i, 0}, out.dims);
  const std::vector<llvm::Value*> dst_strides = contiguous_strides(out.dims);
  auto copy_element = [&](const std::vector<llvm::Value*>& idx) {
    store(out.dtype, out.ptr, linear_offset(dst_strides, idx), load(in.dtype, in.ptr, linear_offset(src_strides, idx)));
  };
  // The output dim the input's innermost dim becomes: when it is not the output's innermost,
  // walking the output in order reads the input a cache line per element.
  const size_t rank = out.dims.size();
  const auto& perm = n.attrs.perm();
  size_t from_inner = rank;
  for (size_t k = 0; k < rank; ++k)
    if (perm[static_cast<int64_t>(k)] == static_cast<int64_t>(rank) - 1) from_inner = k;
  if (rank >= 2 && from_inner + 1 < rank && worth_tiling(src_strides.back(), in.dims, dtype_size(out.dtype)))
    transpose_tiles(out.dims, from_inner, dtype_size(out.dtype), copy_element);
  else
    loop_nest(out.dims, copy_element);
  s.values[i] = {out};
}

// A transpose in square tiles of the two dims that trade places in memory (output dims `a`, which
// the input has innermost, and the output's innermost): within a tile, the lines it reads and
// the lines it writes all stay in the L1 cache, where walking the output in order read one input
// line per element (docs/performance.md, "Measured decisions": tiled transpose).
void Emitter::transpose_tiles(const std::vector<llvm::Value*>& dims, size_t a, size_t element_bytes,
                              const std::function<void(const std::vector<llvm::Value*>&)>& copy_element) {
  const size_t last = dims.size() - 1;
  // A tile row is one 64-byte line of either side.
  const int64_t tile = std::max<int64_t>(8, 64 / static_cast<int64_t>(element_bytes));
  std::vector<llvm::Value*> outer;
  for (size_t k = 0; k < last; ++k)
    if (k != a) outer.push_back(dims[k]);
  auto blocks = [&](llvm::Value* d) { return b_.CreateSDiv(b_.CreateAdd(d, i64(tile - 1)), i64(tile)); };
  // A dim that is a whole number of tiles gives every tile the constant extent (loops LLVM can
  // unroll and vectorize); else the last tile is short.
  auto extent = [&](llvm::Value* d, llvm::Value* start) -> llvm::Value* {
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(d); c && c->getSExtValue() % tile == 0) return i64(tile);
    llvm::Value* left = b_.CreateSub(d, start);
    return b_.CreateSelect(b_.CreateICmpSLT(left, i64(tile)), left, i64(tile));
  };
  // The loops over tiles are named (blocks "tiles", "tiles.end"), for tests and readers of the IR.
  auto tiles = [&](llvm::Value* n, const std::function<void(llvm::Value*)>& body) {
    loop_carry(n, {}, [&](const std::vector<llvm::Value*>&, llvm::Value* t) {
      body(t);
      return std::vector<llvm::Value*>{};
    }, "tiles");
  };
  loop_nest(outer, [&](const std::vector<llvm::Value*>& oidx) {
    tiles(blocks(dims[a]), [&](llvm::Value* ba) {
      llvm::Value* a0 = b_.CreateMul(ba, i64(tile));
      tiles(blocks(dims[last]), [&](llvm::Value* bl) {
        llvm::Value* l0 = b_.CreateMul(bl, i64(tile));
        loop(extent(dims[a], a0), [&](llvm::Value* ia) {
          loop(extent(dims[last], l0), [&](llvm::Value* il) {
            std::vector<llvm::Value*> idx;
            size_t o = 0;
            for (size_t k = 0; k < last; ++k) idx.push_back(k == a ? b_.CreateAdd(a0, ia) : oidx[o++]);
            idx.push_back(b_.CreateAdd(l0, il));
            copy_element(idx);
          });
        });
      });
    });
  });
}

void Emitter::lower_concat(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const TensorType& t = n.outputs[0];
  const int32_t id = s.node_id(i);
  const size_t axis = normalized(n.attrs.axis, static_cast<size_t>(t.shape.rank()));
  std::vector<LVal> ins;
  for (ValueId v : n.inputs) ins.push_back(as_buffer(s.at(v)));
  LVal out;
  out.dtype = t.dtype;
  out.dims = ins[0].dims;
  for (size_t k = 1; k < ins.size(); ++k)
    for (size_t j = 0; j < out.dims.size(); ++j) {
      if (j == axis) {
        out.dims[j] = b_.CreateAdd(out.dims[j], ins[k].dims[j]);
        continue;
      }
      fail_if(b_.CreateICmpNE(out.dims[j], ins[k].dims[j]), id, FailKind::ConcatDims, ins[k].dims[j], out.dims[j]);
    }
  for (size_t j = 0; j < out.dims.size(); ++j)
    if (t.shape[static_cast<int64_t>(j)] >= 0) out.dims[j] = i64(t.shape[static_cast<int64_t>(j)]);
  out.ptr = result_buffer(s, i, out.dims);
  // Rows of the output are [outer] x [sum of the inputs' rows]; input k fills its own column block.
  llvm::Value* outer = numel(std::vector<llvm::Value*>(out.dims.begin(), out.dims.begin() + static_cast<std::ptrdiff_t>(axis)));
  llvm::Value* es = i64(static_cast<int64_t>(dtype_size(t.dtype)));
  llvm::Value* out_row = numel(std::vector<llvm::Value*>(out.dims.begin() + static_cast<std::ptrdiff_t>(axis), out.dims.end()));
  llvm::Value* column = i64(0);
  for (const LVal& in : ins) {
    llvm::Value* row = numel(std::vector<llvm::Value*>(in.dims.begin() + static_cast<std::ptrdiff_t>(axis), in.dims.end()));
    loop(outer, [&](llvm::Value* o) {
      llvm::Value* dst = b_.CreateInBoundsGEP(b_.getInt8Ty(), out.ptr, b_.CreateMul(b_.CreateAdd(b_.CreateMul(o, out_row), column), es));
      llvm::Value* src = b_.CreateInBoundsGEP(b_.getInt8Ty(), in.ptr, b_.CreateMul(b_.CreateMul(o, row), es));
      copy_bytes(dst, src, b_.CreateMul(row, es));
    });
    column = b_.CreateAdd(column, row);
  }
  finish_result(s, i, out, out.ptr);
}

void Emitter::lower_slice(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const TensorType& t = n.outputs[0];
  const int32_t id = s.node_id(i);
  const LVal in = as_buffer(s.at(n.inputs[0]));
  LVal out;
  out.dtype = t.dtype;
  std::vector<llvm::Value*> begin;
  for (size_t k = 0; k < in.dims.size(); ++k) {
    const int64_t b0 = n.attrs.slice_begin()[static_cast<int64_t>(k)], sz = n.attrs.slice_size()[static_cast<int64_t>(k)];
    llvm::Value* size = sz >= 0 ? i64(sz) : b_.CreateSub(in.dims[k], i64(b0));
    fail_if(b_.CreateOr(b_.CreateICmpSGT(i64(b0), in.dims[k]), b_.CreateICmpSGT(b_.CreateAdd(i64(b0), size), in.dims[k])), id,
            FailKind::SliceRange, b_.CreateAdd(i64(b0), size), in.dims[k]);
    begin.push_back(i64(b0));
    out.dims.push_back(t.shape[static_cast<int64_t>(k)] >= 0 ? i64(t.shape[static_cast<int64_t>(k)]) : size);
  }
  const std::vector<llvm::Value*> in_strides = contiguous_strides(in.dims);
  llvm::Value* base = linear_offset(in_strides, begin);
  out.ptr = result_buffer(s, i, out.dims);
  const std::vector<llvm::Value*> dst_strides = contiguous_strides(out.dims);
  loop_nest(out.dims, [&](const std::vector<llvm::Value*>& idx) {
    llvm::Value* src = b_.CreateAdd(base, linear_offset(in_strides, idx));
    store(t.dtype, out.ptr, linear_offset(dst_strides, idx), load(t.dtype, in.ptr, src));
  });
  finish_result(s, i, out, out.ptr);
}

void Emitter::lower_gather(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const TensorType& t = n.outputs[0];
  const int32_t id = s.node_id(i);
  const LVal p = as_buffer(s.at(n.inputs[0]));
  const LVal ind = as_buffer(s.at(n.inputs[1]));
  const size_t axis = normalized(n.attrs.axis, p.dims.size());
  llvm::Value* outer = numel(std::vector<llvm::Value*>(p.dims.begin(), p.dims.begin() + static_cast<std::ptrdiff_t>(axis)));
  llvm::Value* inner = numel(std::vector<llvm::Value*>(p.dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, p.dims.end()));
  llvm::Value* dim = p.dims[axis];
  llvm::Value* nidx = numel(ind.dims);
  // Every index is checked before anything is copied, as the eager kernel does.
  loop(nidx, [&](llvm::Value* j) {
    llvm::Value* idx = b_.CreateSExt(load(ind.dtype, ind.ptr, j), b_.getInt64Ty());
    fail_if(b_.CreateOr(b_.CreateICmpSLT(idx, i64(0)), b_.CreateICmpSGE(idx, dim)), id, FailKind::GatherIndex, idx, dim);
  });
  LVal out;
  out.dtype = t.dtype;
  out.dims.assign(p.dims.begin(), p.dims.begin() + static_cast<std::ptrdiff_t>(axis));
  out.dims.insert(out.dims.end(), ind.dims.begin(), ind.dims.end());
  out.dims.insert(out.dims.end(), p.dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, p.dims.end());
  out.ptr = result_buffer(s, i, out.dims);
  loop(outer, [&](llvm::Value* o) {
    loop(nidx, [&](llvm::Value* j) {
      llvm::Value* idx = b_.CreateSExt(load(ind.dtype, ind.ptr, j), b_.getInt64Ty());
      llvm::Value* src = b_.CreateMul(b_.CreateAdd(b_.CreateMul(o, dim), idx), inner);
      llvm::Value* dst = b_.CreateMul(b_.CreateAdd(b_.CreateMul(o, nidx), j), inner);
      loop(inner, [&](llvm::Value* e) {
        store(t.dtype, out.ptr, b_.CreateAdd(dst, e), load(t.dtype, p.ptr, b_.CreateAdd(src, e)));
      });
    });
  });
  finish_result(s, i, out, out.ptr);
}

}  // namespace ag::jit
