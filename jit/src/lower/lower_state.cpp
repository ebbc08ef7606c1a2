// Side effects and TensorArrays in compiled code: print, variable reads and assignments, random
// draws and the List ops run the eager kernels through agc_rt_eval, so they behave exactly as
// eagerly. Their results live in runtime slots; JIT code reads them through the returned descriptor.
#include "emitter.h"

namespace ag::jit {

void Emitter::lower_runtime_op(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const int32_t id = s.node_id(i);
  const size_t nin = n.inputs.size();
  llvm::Value* args = stack_alloc(static_cast<int64_t>(std::max<size_t>(nin, 1) * 16));
  for (size_t k = 0; k < nin; ++k) {
    const LVal& v = s.at(n.inputs[k]);
    if (v.kind == LVal::Kind::Slot) continue;  // the runtime reads TensorArrays from their slots
    const LVal buf = as_buffer(v);
    llvm::Value* dims = stack_alloc(static_cast<int64_t>(std::max<size_t>(buf.dims.size(), 1) * 8));
    for (size_t d = 0; d < buf.dims.size(); ++d) store(DType::Int64, dims, i64(static_cast<int64_t>(d)), buf.dims[d]);
    llvm::Value* arg = b_.CreateInBoundsGEP(b_.getPtrTy(), args, i64(static_cast<int64_t>(2 * k)));
    b_.CreateStore(buf.ptr, arg);
    b_.CreateStore(dims, b_.CreateInBoundsGEP(b_.getPtrTy(), arg, i64(1)));
  }
  llvm::Value* result = stack_alloc(16);
  llvm::Value* rc = b_.CreateCall(runtime("agc_rt_eval"), {ctx_, i32(id), args, result});
  return_if(b_.CreateICmpNE(rc, i32(0)));
  if (n.outputs.empty()) return;

  const TensorType& t = n.outputs[0];
  LVal out;
  out.dtype = t.dtype;
  if (t.dtype == DType::List) {
    out.kind = LVal::Kind::Slot;
    out.slot = s.plan->values[i][0].slot;
    s.values[i] = {out};
    return;
  }
  // agc_rt_eval has checked the runtime value against the static type.
  llvm::Value* data = b_.CreateLoad(b_.getPtrTy(), result);
  llvm::Value* dims = b_.CreateLoad(b_.getPtrTy(), b_.CreateInBoundsGEP(b_.getPtrTy(), result, i64(1)));
  s.values[i] = {described_value(t, data, dims)};
}

}  // namespace ag::jit
