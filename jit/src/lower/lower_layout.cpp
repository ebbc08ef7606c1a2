// Layout ops. Reshape, expand_dims, squeeze and identity are views (new dims, same buffer);
// transpose, concat, slice and gather copy with index arithmetic; shape_of reads the dims.
#include "emitter.h"

#include <algorithm>

namespace ag::jit {
namespace {

size_t normalized(int64_t axis, size_t rank) {
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

// The lowering of one layout node: views get new dims; transpose, concat, slice and gather copy.
class LayoutLowering : NodeLowering {
 public:
  using NodeLowering::NodeLowering;
  void lower();

 private:
  // Finishes the node with `in`'s data and new dims: a view, a register, or (when the plan gave
  // it a buffer of its own) a copy.
  void finish_view(const LVal& in, std::vector<llvm::Value*> dims);
  void transpose();
  // A transpose in square tiles (see its definition).
  void transpose_tiles(const std::vector<llvm::Value*>& dims, size_t a, size_t element_bytes,
                       const std::function<void(const std::vector<llvm::Value*>&)>& copy_element);
  void concat();
  void slice();
  void slice_update();
  llvm::Value* outside_kept(llvm::Value* out) const;
  void copy_box(DType d, const std::vector<llvm::Value*>& dims, const LVal& from, const std::vector<llvm::Value*>& from_begin,
                const LVal& to, const std::vector<llvm::Value*>& to_begin);
  void copy_outside_box(DType d, const LVal& from, const LVal& to, const Shape& dims, const Shape& begin, const Shape& size);
  void gather();
};

}  // namespace

void Emitter::lower_layout(Scope& s, uint32_t i) { LayoutLowering(*this, s, i).lower(); }

void LayoutLowering::finish_view(const LVal& in, std::vector<llvm::Value*> dims) {
  LVal out;
  out.dtype = s_.graph().nodes[i_].outputs[0].dtype;
  out.dims = std::move(dims);
  const ValueStorage st = s_.plan->values[i_][0].storage;
  if (st == ValueStorage::Reg) {
    out.kind = LVal::Kind::Reg;
    out.reg = e_.as_register(in);
  } else if (st == ValueStorage::View) {
    out.kind = LVal::Kind::Buf;
    out.ptr = in.ptr;
    // A squeeze of a slice read in place keeps the slice's strides without the squeezed dims
    // (plan.cpp, view_slices: no other view of a strided box is planned).
    if (!in.strides.empty()) {
      if (n_.op != OpKind::Squeeze) throw InternalError("jit: a view of a strided slice other than a squeeze");
      for (size_t k = 0; k < in.strides.size(); ++k)
        if (std::find(n_.attrs.axes().begin(), n_.attrs.axes().end(), static_cast<int64_t>(k)) == n_.attrs.axes().end())
          out.strides.push_back(in.strides[k]);
    }
  } else {
    out.kind = LVal::Kind::Buf;
    out.ptr = e_.allocate_value(s_, {i_, 0}, out.dims);
    e_.copy_value(in, out.ptr);
  }
  s_.values[i_] = {out};
}

void LayoutLowering::lower() {
  const TensorType& t = n_.outputs[0];
  const int32_t id = s_.node_id(i_);
  if (t.dtype == DType::List) {  // Identity of a TensorArray handle
    const LVal& in = s_.at(n_.inputs[0]);
    LVal out = in;
    out.slot = s_.plan->values[i_][0].slot;
    b_.CreateCall(e_.runtime("agc_rt_slot_copy"),
                  {e_.ctx(), e_.i32(in.slot), e_.i32(out.slot), e_.i32(e_.program().nodes[id].consume & 1 ? 1 : 0)});
    s_.values[i_] = {out};
    return;
  }
  const LVal& in = n_.inputs.empty() ? LVal{} : s_.at(n_.inputs[0]);
  switch (n_.op) {
    case OpKind::Identity:
    case OpKind::StopGradient: return finish_view(in, in.dims);
    case OpKind::Reshape: {
      std::vector<llvm::Value*> dims;
      llvm::Value* known = e_.i64(1);
      int64_t unknown = -1;
      for (int64_t k = 0; k < n_.attrs.shape.rank(); ++k) {
        if (n_.attrs.shape[k] == -1) {
          unknown = k;
          dims.push_back(nullptr);
          continue;
        }
        dims.push_back(e_.i64(n_.attrs.shape[k]));
        known = b_.CreateMul(known, dims.back());
      }
      llvm::Value* total = e_.numel(in.dims);
      if (unknown >= 0) {
        llvm::Value* safe = b_.CreateSelect(b_.CreateICmpEQ(known, e_.i64(0)), e_.i64(1), known);
        e_.fail_if(b_.CreateOr(b_.CreateICmpEQ(known, e_.i64(0)), b_.CreateICmpNE(b_.CreateSRem(total, safe), e_.i64(0))), id,
                FailKind::Reshape, total, known);
        dims[static_cast<size_t>(unknown)] = t.shape[unknown] >= 0 ? e_.i64(t.shape[unknown]) : b_.CreateSDiv(total, safe);
      } else {
        e_.fail_if(b_.CreateICmpNE(total, known), id, FailKind::Reshape, total, known);
      }
      return finish_view(in, dims);
    }
    case OpKind::EnsureShape: {  // a view whose known dims are checked
      std::vector<llvm::Value*> dims = in.dims;
      for (size_t k = 0; k < dims.size(); ++k)
        if (const int64_t want = n_.attrs.shape[static_cast<int64_t>(k)]; want >= 0) {
          e_.fail_if(b_.CreateICmpNE(dims[k], e_.i64(want)), id, FailKind::EnsureShape, dims[k], e_.i64(static_cast<int64_t>(k)));
          dims[k] = e_.i64(want);
        }
      return finish_view(in, dims);
    }
    case OpKind::ExpandDims: {
      std::vector<llvm::Value*> dims = in.dims;
      dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(normalized(n_.attrs.axis, in.dims.size() + 1)), e_.i64(1));
      return finish_view(in, dims);
    }
    case OpKind::Squeeze: {
      std::vector<llvm::Value*> dims;  // axes() lists exactly the dims to remove
      for (size_t k = 0; k < in.dims.size(); ++k) {
        if (std::find(n_.attrs.axes().begin(), n_.attrs.axes().end(), static_cast<int64_t>(k)) != n_.attrs.axes().end()) {
          e_.fail_if(b_.CreateICmpNE(in.dims[k], e_.i64(1)), id, FailKind::Squeeze, in.dims[k]);
          continue;
        }
        dims.push_back(in.dims[k]);
      }
      return finish_view(in, dims);
    }
    case OpKind::ShapeOf: {
      LVal out;
      out.dtype = DType::Int64;
      out.dims = {e_.i64(static_cast<int64_t>(in.dims.size()))};
      if (s_.plan->values[i_][0].storage == ValueStorage::Reg) {
        out.kind = LVal::Kind::Reg;
        out.reg = in.dims[0];
      } else {
        out.kind = LVal::Kind::Buf;
        out.ptr = e_.allocate_value(s_, {i_, 0}, out.dims);
        for (size_t k = 0; k < in.dims.size(); ++k) e_.store(DType::Int64, out.ptr, e_.i64(static_cast<int64_t>(k)), in.dims[k]);
      }
      s_.values[i_] = {out};
      return;
    }
    case OpKind::Transpose: return transpose();
    case OpKind::Concat: return concat();
    case OpKind::Slice: return slice();
    case OpKind::SliceUpdate: return slice_update();
    case OpKind::Gather: return gather();
    default: break;
  }
  throw InternalError("jit: no lowering for " + std::string(op_name(n_.op)));
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

void LayoutLowering::transpose() {
  const LVal in = e_.as_buffer(s_.at(n_.inputs[0]));
  const std::vector<llvm::Value*> in_strides = e_.contiguous_strides(in.dims);
  LVal out;
  out.dtype = in.dtype;
  std::vector<llvm::Value*> src_strides;
  for (int64_t p : n_.attrs.perm()) {
    out.dims.push_back(in.dims[static_cast<size_t>(p)]);
    src_strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  if (s_.plan->values[i_][0].storage == ValueStorage::Reg) return finish_view(in, out.dims);
  out.kind = LVal::Kind::Buf;
  out.ptr = e_.allocate_value(s_, {i_, 0}, out.dims);
  const std::vector<llvm::Value*> dst_strides = e_.contiguous_strides(out.dims);
  auto copy_element = [&](const std::vector<llvm::Value*>& idx) {
    e_.store(out.dtype, out.ptr, e_.linear_offset(dst_strides, idx), e_.load(in.dtype, in.ptr, e_.linear_offset(src_strides, idx)));
  };
  // The output dim the input's innermost dim becomes: when it is not the output's innermost,
  // walking the output in order reads the input a cache line per element.
  const size_t rank = out.dims.size();
  const auto& perm = n_.attrs.perm();
  size_t from_inner = rank;
  for (size_t k = 0; k < rank; ++k)
    if (perm[static_cast<int64_t>(k)] == static_cast<int64_t>(rank) - 1) from_inner = k;
  if (rank >= 2 && from_inner + 1 < rank && worth_tiling(src_strides.back(), in.dims, dtype_size(out.dtype)))
    transpose_tiles(out.dims, from_inner, dtype_size(out.dtype), copy_element);
  else
    e_.loop_nest(out.dims, copy_element);
  s_.values[i_] = {out};
}

// A transpose in square tiles of the two dims that trade places in memory (output dims `a`, which
// the input has innermost, and the output's innermost): within a tile, the lines it reads and
// the lines it writes all stay in the L1 cache, where walking the output in order read one input
// line per element (docs/performance.md, "Measured decisions": tiled transpose).
void LayoutLowering::transpose_tiles(const std::vector<llvm::Value*>& dims, size_t a, size_t element_bytes,
                                     const std::function<void(const std::vector<llvm::Value*>&)>& copy_element) {
  const size_t last = dims.size() - 1;
  // A tile row is one 64-byte line of either side.
  const int64_t tile = std::max<int64_t>(8, 64 / static_cast<int64_t>(element_bytes));
  std::vector<llvm::Value*> outer;
  for (size_t k = 0; k < last; ++k)
    if (k != a) outer.push_back(dims[k]);
  auto blocks = [&](llvm::Value* d) { return b_.CreateSDiv(b_.CreateAdd(d, e_.i64(tile - 1)), e_.i64(tile)); };
  // A dim that is a whole number of tiles gives every tile the constant extent (loops LLVM can
  // unroll and vectorize); else the last tile is short.
  auto extent = [&](llvm::Value* d, llvm::Value* start) -> llvm::Value* {
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(d); c && c->getSExtValue() % tile == 0) return e_.i64(tile);
    llvm::Value* left = b_.CreateSub(d, start);
    return b_.CreateSelect(b_.CreateICmpSLT(left, e_.i64(tile)), left, e_.i64(tile));
  };
  // The loops over tiles are named (blocks "tiles", "tiles.end"), for tests and readers of the IR.
  auto tiles = [&](llvm::Value* n, const std::function<void(llvm::Value*)>& body) {
    e_.loop_carry(n, {}, [&](const std::vector<llvm::Value*>&, llvm::Value* t) {
      body(t);
      return std::vector<llvm::Value*>{};
    }, "tiles");
  };
  e_.loop_nest(outer, [&](const std::vector<llvm::Value*>& oidx) {
    tiles(blocks(dims[a]), [&](llvm::Value* ba) {
      llvm::Value* a0 = b_.CreateMul(ba, e_.i64(tile));
      tiles(blocks(dims[last]), [&](llvm::Value* bl) {
        llvm::Value* l0 = b_.CreateMul(bl, e_.i64(tile));
        e_.loop(extent(dims[a], a0), [&](llvm::Value* ia) {
          e_.loop(extent(dims[last], l0), [&](llvm::Value* il) {
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

void LayoutLowering::concat() {
  const TensorType& t = n_.outputs[0];
  const int32_t id = s_.node_id(i_);
  const size_t axis = normalized(n_.attrs.axis, static_cast<size_t>(t.shape.rank()));
  std::vector<LVal> ins;
  std::vector<bool> boxed;  // computed in place already (plan_updates.h)
  for (ValueId v : n_.inputs) {
    boxed.push_back(s_.plan->at(v).storage == ValueStorage::Box);
    ins.push_back(boxed.back() ? s_.at(v) : e_.as_buffer(s_.at(v)));
  }
  LVal out;
  out.dtype = t.dtype;
  out.dims = ins[0].dims;
  for (size_t k = 1; k < ins.size(); ++k)
    for (size_t j = 0; j < out.dims.size(); ++j) {
      if (j == axis) {
        out.dims[j] = b_.CreateAdd(out.dims[j], ins[k].dims[j]);
        continue;
      }
      e_.fail_if(b_.CreateICmpNE(out.dims[j], ins[k].dims[j]), id, FailKind::ConcatDims, ins[k].dims[j], out.dims[j]);
    }
  for (size_t j = 0; j < out.dims.size(); ++j)
    if (t.shape[static_cast<int64_t>(j)] >= 0) out.dims[j] = e_.i64(t.shape[static_cast<int64_t>(j)]);
  const bool in_place = s_.plan->values[i_][0].storage == ValueStorage::Box;  // itself a piece of a concat
  out.ptr = in_place || std::find(boxed.begin(), boxed.end(), true) != boxed.end() ? e_.update_buffer(s_, i_)
                                                                                   : e_.result_buffer(s_, i_, out.dims);
  // Rows of the output are [outer] x [sum of the inputs' rows]; input k fills its own column block.
  llvm::Value* outer = e_.numel(std::vector<llvm::Value*>(out.dims.begin(), out.dims.begin() + static_cast<std::ptrdiff_t>(axis)));
  llvm::Value* es = e_.i64(static_cast<int64_t>(dtype_size(t.dtype)));
  llvm::Value* out_row = e_.numel(std::vector<llvm::Value*>(out.dims.begin() + static_cast<std::ptrdiff_t>(axis), out.dims.end()));
  llvm::Value* column = e_.i64(0);
  for (size_t k = 0; k < ins.size(); ++k) {
    const LVal& in = ins[k];
    llvm::Value* row = e_.numel(std::vector<llvm::Value*>(in.dims.begin() + static_cast<std::ptrdiff_t>(axis), in.dims.end()));
    if (boxed[k]) {
      column = b_.CreateAdd(column, row);
      continue;
    }
    e_.loop(outer, [&](llvm::Value* o) {
      llvm::Value* dst = b_.CreateInBoundsGEP(b_.getInt8Ty(), out.ptr, b_.CreateMul(b_.CreateAdd(b_.CreateMul(o, out_row), column), es));
      llvm::Value* src = b_.CreateInBoundsGEP(b_.getInt8Ty(), in.ptr, b_.CreateMul(b_.CreateMul(o, row), es));
      e_.copy_bytes(dst, src, b_.CreateMul(row, es));
    });
    column = b_.CreateAdd(column, row);
  }
  e_.finish_result(s_, i_, out, out.ptr);
}

void LayoutLowering::slice() {
  const TensorType& t = n_.outputs[0];
  const int32_t id = s_.node_id(i_);
  const LVal in = e_.as_buffer(s_.at(n_.inputs[0]));
  LVal out;
  out.dtype = t.dtype;
  std::vector<llvm::Value*> begin;
  for (size_t k = 0; k < in.dims.size(); ++k) {
    const int64_t b0 = n_.attrs.slice_begin()[static_cast<int64_t>(k)], sz = n_.attrs.slice_size()[static_cast<int64_t>(k)];
    // (sz < 0: through dim + sz + 1, an empty range when that is before b0: attrs.h)
    llvm::Value* size = sz >= 0 ? e_.i64(sz)
                                : b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b_.CreateSub(in.dims[k], e_.i64(b0 - sz - 1)), e_.i64(0));
    e_.fail_if(b_.CreateOr(b_.CreateICmpSGT(e_.i64(b0), in.dims[k]), b_.CreateICmpSGT(b_.CreateAdd(e_.i64(b0), size), in.dims[k])), id,
            FailKind::SliceRange, b_.CreateAdd(e_.i64(b0), size), in.dims[k]);
    begin.push_back(e_.i64(b0));
    out.dims.push_back(t.shape[static_cast<int64_t>(k)] >= 0 ? e_.i64(t.shape[static_cast<int64_t>(k)]) : size);
  }
  if (s_.plan->values[i_][0].storage == ValueStorage::View) {  // read in place (plan.cpp, view_slices)
    out.kind = LVal::Kind::Buf;
    out.strides = e_.contiguous_strides(in.dims);
    out.ptr = b_.CreateInBoundsGEP(e_.mem_type(t.dtype), in.ptr, e_.linear_offset(out.strides, begin));
    s_.values[i_] = {out};
    return;
  }
  out.ptr = e_.result_buffer(s_, i_, out.dims);
  copy_box(t.dtype, out.dims, in, begin, out, {});
  e_.finish_result(s_, i_, out, out.ptr);
}

// Copies a box of `dims` elements from buffer `from`, starting at `from_begin`, into buffer `to`
// at `to_begin` (an empty begin: the buffer's origin); both row-major in their own dims.
void LayoutLowering::copy_box(DType d, const std::vector<llvm::Value*>& dims, const LVal& from,
                              const std::vector<llvm::Value*>& from_begin, const LVal& to,
                              const std::vector<llvm::Value*>& to_begin) {
  const std::vector<llvm::Value*> from_strides = e_.contiguous_strides(from.dims);
  const std::vector<llvm::Value*> to_strides = e_.contiguous_strides(to.dims);
  llvm::Value* from_base = from_begin.empty() ? e_.i64(0) : e_.linear_offset(from_strides, from_begin);
  llvm::Value* to_base = to_begin.empty() ? e_.i64(0) : e_.linear_offset(to_strides, to_begin);
  e_.loop_nest(dims, [&](const std::vector<llvm::Value*>& idx) {
    llvm::Value* src = b_.CreateAdd(from_base, e_.linear_offset(from_strides, idx));
    llvm::Value* dst = b_.CreateAdd(to_base, e_.linear_offset(to_strides, idx));
    e_.store(d, to.ptr, dst, e_.load(d, from.ptr, src));
  });
}

// Every element of `from` outside the box [begin, begin + size) copied into `to` (both row-major
// in the static `dims`): along each dim the whole slabs before and after the box, then the same
// inside each of the box's rows. A grid's border: two rows and two elements per row.
void LayoutLowering::copy_outside_box(DType d, const LVal& from, const LVal& to, const Shape& dims, const Shape& begin,
                                      const Shape& size) {
  const int64_t rank = dims.rank();
  auto inside_from = [&](int64_t k) {  // the box spans dims k.. whole
    for (int64_t j = k; j < rank; ++j)
      if (begin[j] != 0 || size[j] != dims[j]) return false;
    return true;
  };
  const int64_t element = static_cast<int64_t>(dtype_size(d));
  std::function<void(int64_t, llvm::Value*)> slabs = [&](int64_t k, llvm::Value* base) {
    int64_t inner = 1;
    for (int64_t j = k + 1; j < rank; ++j) inner *= dims[j];
    auto copy = [&](int64_t first, int64_t count) {
      if (count <= 0) return;
      llvm::Value* at = b_.CreateMul(b_.CreateAdd(base, e_.i64(first * inner)), e_.i64(element));
      e_.copy_bytes(b_.CreateInBoundsGEP(b_.getInt8Ty(), to.ptr, at), b_.CreateInBoundsGEP(b_.getInt8Ty(), from.ptr, at),
                    e_.i64(count * inner * element));
    };
    copy(0, begin[k]);
    copy(begin[k] + size[k], dims[k] - begin[k] - size[k]);
    if (k + 1 < rank && size[k] > 0 && !inside_from(k + 1))
      e_.loop(e_.i64(size[k]), [&](llvm::Value* r) {
        slabs(k + 1, b_.CreateAdd(base, b_.CreateMul(b_.CreateAdd(r, e_.i64(begin[k])), e_.i64(inner))));
      });
  };
  if (!inside_from(0)) slabs(0, e_.i64(0));
}

// When this update is a loop body's next value of loop variable k from the variable itself,
// written into the state's free buffer: the Sink's i1 saying that buffer already holds the
// elements outside the box (a stencil's fixed border, copied on the first iteration only).
llvm::Value* LayoutLowering::outside_kept(llvm::Value* out) const {
  if (s_.plan->kind != ScopeKind::WhileBody) return nullptr;
  const Graph& g = s_.graph();
  for (size_t k = 0; k < s_.sinks.size() && k < g.results.size() && k < g.params.size(); ++k) {
    const Sink& sink = s_.sinks[k];
    if (sink.outside_kept && sink.ptr == out && g.results[k] == ValueId{i_, 0} && n_.inputs[0] == ValueId{g.params[k], 0})
      return sink.outside_kept;
  }
  return nullptr;
}

// x copied into the result, then the update's box written over it; or, when the box was computed
// straight into the result (plan_updates.h, Box), only x's elements outside the box.
void LayoutLowering::slice_update() {
  const TensorType& t = n_.outputs[0];
  const int32_t id = s_.node_id(i_);
  const LVal x = e_.as_buffer(s_.at(n_.inputs[0]));
  const bool boxed = s_.plan->at(n_.inputs[1]).storage == ValueStorage::Box;
  const LVal u = boxed ? s_.at(n_.inputs[1]) : e_.as_buffer(s_.at(n_.inputs[1]));
  LVal out;
  out.dtype = t.dtype;
  std::vector<llvm::Value*> begin;
  for (size_t k = 0; k < x.dims.size(); ++k) {
    const int64_t b0 = n_.attrs.slice_begin()[static_cast<int64_t>(k)];
    llvm::Value* end = b_.CreateAdd(e_.i64(b0), u.dims[k]);
    e_.fail_if(b_.CreateICmpSGT(end, x.dims[k]), id, FailKind::SliceRange, end, x.dims[k]);
    begin.push_back(e_.i64(b0));
    out.dims.push_back(t.shape[static_cast<int64_t>(k)] >= 0 ? e_.i64(t.shape[static_cast<int64_t>(k)]) : x.dims[k]);
  }
  if (boxed) {
    out.ptr = e_.update_buffer(s_, i_);
    auto copy_outside = [&] { copy_outside_box(t.dtype, x, out, t.shape, n_.attrs.slice_begin(), s_.type(n_.inputs[1]).shape); };
    if (llvm::Value* kept = outside_kept(out.ptr)) e_.if_then(b_.CreateNot(kept), copy_outside);
    else copy_outside();
    e_.finish_result(s_, i_, out, out.ptr);
    return;
  }
  if (s_.plan->values[i_][0].storage == ValueStorage::View) {
    out.ptr = x.ptr;  // in place (plan.cpp, update_in_place): only the box is written
  } else {
    out.ptr = e_.result_buffer(s_, i_, out.dims);
    e_.copy_value(x, out.ptr);
  }
  copy_box(t.dtype, u.dims, u, {}, out, begin);
  e_.finish_result(s_, i_, out, out.ptr);
}

void LayoutLowering::gather() {
  if (s_.plan->values[i_][0].storage == ValueStorage::Fused) return e_.describe_fused_gather(s_, i_);  // read by a scatter
  const TensorType& t = n_.outputs[0];
  const int32_t id = s_.node_id(i_);
  const LVal p = e_.as_buffer(s_.at(n_.inputs[0]));
  const LVal ind = e_.as_buffer(s_.at(n_.inputs[1]));
  const size_t axis = normalized(n_.attrs.axis, p.dims.size());
  llvm::Value* outer = e_.numel(std::vector<llvm::Value*>(p.dims.begin(), p.dims.begin() + static_cast<std::ptrdiff_t>(axis)));
  llvm::Value* inner = e_.numel(std::vector<llvm::Value*>(p.dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, p.dims.end()));
  llvm::Value* dim = p.dims[axis];
  llvm::Value* nidx = e_.numel(ind.dims);
  // Every index is checked before anything is copied, as the eager kernel does.
  e_.loop(nidx, [&](llvm::Value* j) {
    llvm::Value* idx = b_.CreateSExt(e_.load(ind.dtype, ind.ptr, j), b_.getInt64Ty());
    e_.fail_if(b_.CreateOr(b_.CreateICmpSLT(idx, e_.i64(0)), b_.CreateICmpSGE(idx, dim)), id, FailKind::GatherIndex, idx, dim);
  });
  LVal out;
  out.dtype = t.dtype;
  out.dims.assign(p.dims.begin(), p.dims.begin() + static_cast<std::ptrdiff_t>(axis));
  out.dims.insert(out.dims.end(), ind.dims.begin(), ind.dims.end());
  out.dims.insert(out.dims.end(), p.dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, p.dims.end());
  out.ptr = e_.result_buffer(s_, i_, out.dims);
  e_.loop(outer, [&](llvm::Value* o) {
    e_.loop(nidx, [&](llvm::Value* j) {
      llvm::Value* idx = b_.CreateSExt(e_.load(ind.dtype, ind.ptr, j), b_.getInt64Ty());
      llvm::Value* src = b_.CreateMul(b_.CreateAdd(b_.CreateMul(o, dim), idx), inner);
      llvm::Value* dst = b_.CreateMul(b_.CreateAdd(b_.CreateMul(o, nidx), j), inner);
      e_.loop(inner, [&](llvm::Value* e) {
        e_.store(t.dtype, out.ptr, b_.CreateAdd(dst, e), e_.load(t.dtype, p.ptr, b_.CreateAdd(src, e)));
      });
    });
  });
  e_.finish_result(s_, i_, out, out.ptr);
}

}  // namespace ag::jit
