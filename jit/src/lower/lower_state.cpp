// Side effects and TensorArrays in compiled code.
//
// Native (Jit column `Native`): Variable reads and assignments call typed helpers with the
// node's VariableState (from ctx->consts) that lock the variable and copy straight between its
// value and the JIT buffers; print passes the buffers it already has; assert checks its condition
// in IR and calls a helper only when it fails; a random draw takes its words from the generator
// and fills the node's buffer with the eager stream kernel, with no copy (rt_state_helpers.cpp).
//
// TensorArrays: a handle lives in a runtime slot and its elements in one contiguous buffer; typed
// helpers (rt_list_helpers.cpp) write into it in place, and hand reads and stacks a pointer to
// the data, which the code copies into the node's buffer.
#include "emitter.h"

namespace ag::jit {
namespace {

// Whether any node of the scope or its results reads node i's value.
bool has_uses(const Scope& s, uint32_t i) {
  const Graph& g = s.graph();
  for (const Node& n : g.nodes)
    for (ValueId v : n.inputs)
      if (v.node == i) return true;
  for (ValueId v : g.results)
    if (v.node == i) return true;
  return false;
}

}  // namespace

// Fills the JitArg at `arg` (data pointer, dims) for a tensor value.
void Emitter::fill_arg(llvm::Value* arg, const LVal& v) {
  const LVal buf = as_buffer(v);
  llvm::Value* dims = stack_alloc(static_cast<int64_t>(std::max<size_t>(buf.dims.size(), 1) * 8));
  for (size_t d = 0; d < buf.dims.size(); ++d) store(DType::Int64, dims, i64(static_cast<int64_t>(d)), buf.dims[d]);
  b_.CreateStore(buf.ptr, arg);
  b_.CreateStore(dims, b_.CreateInBoundsGEP(b_.getPtrTy(), arg, i64(1)));
}

llvm::Value* Emitter::tensor_arg(const LVal& v) {
  llvm::Value* arg = stack_alloc(16);
  fill_arg(arg, v);
  return arg;
}

// A JitArg array on the stack describing node i's tensor inputs.
llvm::Value* Emitter::input_args(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const size_t nin = n.inputs.size();
  llvm::Value* args = stack_alloc(static_cast<int64_t>(std::max<size_t>(nin, 1) * 16));
  for (size_t k = 0; k < nin; ++k)
    fill_arg(b_.CreateInBoundsGEP(b_.getPtrTy(), args, i64(static_cast<int64_t>(2 * k))), s.at(n.inputs[k]));
  return args;
}

void Emitter::lower_stateful(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const int32_t id = s.node_id(i);
  // A Variable's or a Generator's VariableState is per call data (the backend's consts table),
  // not a constant in the code: the object code stays independent of the process (disk cache).
  auto state = [&] {
    return b_.CreateLoad(b_.getPtrTy(), b_.CreateInBoundsGEP(b_.getPtrTy(), ctx_field(CtxField::Consts), i64(id)));
  };
  // The node's result, of its static type.
  auto static_result = [&] {
    LVal out;
    out.dtype = n.outputs[0].dtype;
    out.dims = static_dims(n.outputs[0].shape);
    return out;
  };
  switch (n.op) {
    case OpKind::ReadVariable:
    case OpKind::AssignVariable:
    case OpKind::AssignAddVariable:
    case OpKind::AssignSubVariable: {
      llvm::Value* var = state();
      LVal out = static_result();
      if (n.op == OpKind::ReadVariable) {
        llvm::Value* ptr = result_buffer(s, i, out.dims);
        b_.CreateCall(runtime("agc_rt_var_read"), {var, ptr});
        return finish_result(s, i, out, ptr);
      }
      const ValueStorage st = s.plan->values[i][0].storage;
      const bool unused = !has_uses(s, i) && (st == ValueStorage::Reg || st == ValueStorage::Arena);
      llvm::Value* ptr = unused ? nullptr : result_buffer(s, i, out.dims);
      llvm::Value* result = ptr ? ptr : llvm::ConstantPointerNull::get(b_.getPtrTy());
      // A scalar added to a scalar variable (a staged loop's counter): the helper without the
      // shape dispatch (W7).
      const DType d = out.dtype;
      const TensorType& operand = s.type(n.inputs[0]);
      const bool scalar_add = n.op != OpKind::AssignVariable && out.dims.empty() && operand.shape.rank() == 0 && operand.dtype == d &&
                              (d == DType::Int32 || d == DType::Int64 || d == DType::Float32 || d == DType::Float64);
      llvm::Value* rc =
          scalar_add ? b_.CreateCall(runtime("agc_rt_var_add_scalar"),
                                     {ctx_, i32(id), i32(n.op == OpKind::AssignSubVariable), var,
                                      as_buffer(s.at(n.inputs[0])).ptr, result})
                     : b_.CreateCall(runtime("agc_rt_var_assign"), {ctx_, i32(id), var, input_args(s, i), result});
      return_if(b_.CreateICmpNE(rc, i32(0)));
      if (unused) {
        out.kind = LVal::Kind::Buf;  // never read
        s.values[i] = {out};
        return;
      }
      return finish_result(s, i, out, ptr);
    }
    case OpKind::RandomUniform:
    case OpKind::RandomNormal: {
      LVal out = static_result();
      if (s.plan->values[i][0].storage == ValueStorage::Fused) {
        // Inlined: take the words here (the draw's place among the generator's draws); the
        // consuming loop computes each element from them (lower_random.cpp).
        llvm::Value* words = stack_alloc(16);
        return_if(b_.CreateICmpNE(b_.CreateCall(runtime("agc_rt_random_words"), {ctx_, i32(id), state(), words}), i32(0)));
        out.kind = LVal::Kind::Fused;
        out.reg = stream_mix(b_.CreateLoad(b_.getInt64Ty(), words));
        out.counter = b_.CreateLoad(b_.getInt64Ty(), b_.CreateInBoundsGEP(b_.getInt64Ty(), words, i64(1)));
        s.values[i] = {out};
        return;
      }
      llvm::Value* ptr = result_buffer(s, i, out.dims);
      return_if(b_.CreateICmpNE(b_.CreateCall(runtime("agc_rt_random"), {ctx_, i32(id), state(), ptr}), i32(0)));
      return finish_result(s, i, out, ptr);
    }
    case OpKind::Print: {
      llvm::Value* rc = b_.CreateCall(runtime("agc_rt_print"), {ctx_, i32(id), input_args(s, i)});
      return_if(b_.CreateICmpNE(rc, i32(0)));
      return;
    }
    case OpKind::Assert: {
      // All elements true: the common case costs a loop over the condition and no call.
      const LVal& cond = s.at(n.inputs[0]);
      llvm::Value* all = nullptr;
      if (cond.kind == LVal::Kind::Reg) {
        all = cond.reg;
      } else {
        llvm::Value* acc = stack_alloc(1);
        store(DType::Bool, acc, i64(0), b_.getTrue());
        loop(numel(cond.dims), [&](llvm::Value* k) {
          store(DType::Bool, acc, i64(0), b_.CreateAnd(load(DType::Bool, acc, i64(0)), load(DType::Bool, cond.ptr, k)));
        });
        all = load(DType::Bool, acc, i64(0));
      }
      llvm::Value* failed = b_.CreateNot(all);
      if_then(failed, [&] { b_.CreateCall(runtime("agc_rt_assert_failed"), {ctx_, i32(id), input_args(s, i)}); });
      return_if(failed);
      return;
    }
    default: throw InternalError("jit: no native lowering for " + std::string(op_name(n.op)));
  }
}

void Emitter::lower_list(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const int32_t id = s.node_id(i);
  auto index = [&] { return b_.CreateSExtOrTrunc(as_register(s.at(n.inputs[1])), b_.getInt64Ty()); };
  auto check = [&](llvm::Value* rc) { return_if(b_.CreateICmpNE(rc, i32(0))); };
  // A List result is the handle the helper put in the node's slot.
  auto list_result = [&] {
    LVal out;
    out.kind = LVal::Kind::Slot;
    out.dtype = DType::List;
    out.slot = s.plan->values[i][0].slot;
    s.values[i] = {out};
  };
  switch (n.op) {
    case OpKind::Const:  // a TensorArray captured as a constant
      check(b_.CreateCall(runtime("agc_rt_list_const"), {ctx_, i32(id)}));
      return list_result();
    case OpKind::ListWrite:
      check(b_.CreateCall(runtime("agc_rt_list_write"), {ctx_, i32(id), index(), tensor_arg(s.at(n.inputs[2]))}));
      return list_result();
    case OpKind::ListSize: {
      LVal out;
      out.kind = LVal::Kind::Reg;
      out.dtype = n.outputs[0].dtype;
      out.reg = b_.CreateTrunc(b_.CreateCall(runtime("agc_rt_list_size"), {ctx_, i32(id)}), b_.getInt32Ty());
      s.values[i] = {out};
      return;
    }
    case OpKind::ListRead:
    case OpKind::ListStack: {
      // The helper points at the data inside the list; it is copied out before anything else
      // runs, so a later write to the list cannot change this value.
      const TensorType& t = n.outputs[0];
      llvm::Value* dims = stack_alloc(std::max<int64_t>(t.shape.rank(), 1) * 8);
      llvm::Value* data_slot = stack_alloc(8);
      check(n.op == OpKind::ListRead
                ? b_.CreateCall(runtime("agc_rt_list_read"), {ctx_, i32(id), index(), dims, data_slot})
                : b_.CreateCall(runtime("agc_rt_list_stack"), {ctx_, i32(id), dims, data_slot}));
      llvm::Value* src = b_.CreateLoad(b_.getPtrTy(), data_slot);
      if (n.op == OpKind::ListRead && is_register_type(t)) {  // a read always points at data
        s.values[i] = {described_value(t, src, dims)};
        return;
      }
      LVal out;
      out.dtype = t.dtype;
      out.dims = described_dims(t, dims);
      llvm::Value* ptr = result_buffer(s, i, out.dims);
      llvm::Value* bytes = byte_size(t.dtype, out.dims);
      llvm::Value* none = b_.CreateICmpEQ(src, llvm::ConstantPointerNull::get(b_.getPtrTy()));
      if_then(none, [&] { b_.CreateMemSet(ptr, b_.getInt8(0), bytes, llvm::MaybeAlign(1)); });  // stack: nothing written
      if_then(b_.CreateNot(none), [&] { copy_bytes(ptr, src, bytes); });
      return finish_result(s, i, out, ptr);
    }
    default: throw InternalError("jit: no TensorArray lowering for " + std::string(op_name(n.op)));
  }
}

}  // namespace ag::jit
