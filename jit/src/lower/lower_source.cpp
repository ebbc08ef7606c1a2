// Source ops that compute their size at run time: range(start, limit, delta), sized exactly as
// the eager kernel (and TensorFlow) sizes it. Const lives in lower_scope.cpp; Fill and FillLike are
// elementwise (lower_fused.cpp).
#include "emitter.h"

namespace ag::jit {

void Emitter::lower_source(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  if (n.op != OpKind::Range) throw InternalError("jit: no lowering for " + std::string(op_name(n.op)));
  const int32_t id = s.node_id(i);
  const DType d = n.outputs[0].dtype;
  llvm::Value* start = as_register(s.at(n.inputs[0]));
  llvm::Value* limit = as_register(s.at(n.inputs[1]));
  llvm::Value* delta = as_register(s.at(n.inputs[2]));
  const bool fp = is_floating(d);
  llvm::Value* zero = llvm::Constant::getNullValue(delta->getType());
  fail_if(fp ? b_.CreateFCmpOEQ(delta, zero) : b_.CreateICmpEQ(delta, zero), id, FailKind::RangeDeltaZero);
  llvm::Value* count = nullptr;
  llvm::Value* empty = nullptr;
  if (fp) {
    empty = b_.CreateOr(b_.CreateAnd(b_.CreateFCmpOGT(delta, zero), b_.CreateFCmpOLE(limit, start)),
                        b_.CreateAnd(b_.CreateFCmpOLT(delta, zero), b_.CreateFCmpOGE(limit, start)));
    auto wide = [&](llvm::Value* v) { return d == DType::Float64 ? v : b_.CreateFPExt(v, b_.getDoubleTy()); };
    llvm::Value* q = b_.CreateFDiv(b_.CreateFSub(wide(limit), wide(start)), wide(delta));
    llvm::Value* c = b_.CreateIntrinsic(llvm::Intrinsic::ceil, {b_.getDoubleTy()},
                                        {b_.CreateIntrinsic(llvm::Intrinsic::fabs, {b_.getDoubleTy()}, {q})});
    count = b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {b_.getInt64Ty(), b_.getDoubleTy()}, {c});
  } else {
    empty = b_.CreateOr(b_.CreateAnd(b_.CreateICmpSGT(delta, zero), b_.CreateICmpSLE(limit, start)),
                        b_.CreateAnd(b_.CreateICmpSLT(delta, zero), b_.CreateICmpSGE(limit, start)));
    // (|limit - start| + |delta| - 1) / |delta| in unsigned 64-bit, the differences wrapping in T.
    llvm::Value* span = b_.CreateSExt(b_.CreateSelect(b_.CreateICmpSGT(limit, start), b_.CreateSub(limit, start),
                                                      b_.CreateSub(start, limit)),
                                      b_.getInt64Ty());
    llvm::Value* step = b_.CreateSExt(b_.CreateSelect(b_.CreateICmpSGT(delta, zero), delta, b_.CreateSub(zero, delta)),
                                      b_.getInt64Ty());
    count = b_.CreateUDiv(b_.CreateSub(b_.CreateAdd(span, step), i64(1)), step);
  }
  count = b_.CreateSelect(empty, i64(0), count);
  constexpr int64_t kMaxElements = int64_t{1} << 40;
  fail_if(b_.CreateICmpUGT(count, i64(kMaxElements)), id, FailKind::RangeTooLarge, count);

  LVal out;
  out.dtype = d;
  out.dims = {count};
  out.ptr = result_buffer(s, i, out.dims);
  llvm::Type* t = reg_type(d);
  loop(count, [&](llvm::Value* k) {
    llvm::Value* v = fp ? b_.CreateFAdd(start, b_.CreateFMul(b_.CreateSIToFP(k, t), delta))
                        : b_.CreateAdd(start, b_.CreateMul(b_.CreateTrunc(k, t), delta));
    store(d, out.ptr, k, v);
  });
  finish_result(s, i, out, out.ptr);
}

}  // namespace ag::jit
