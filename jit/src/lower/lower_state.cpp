// Side effects, collectives and TensorArrays in compiled code.
//
// Variable reads and assignments call typed helpers with the node's VariableState (from
// ctx->consts) that lock the variable and copy straight between its value and the JIT buffers; print passes the buffers it already has; assert checks its condition
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

// The lowering of one node of the Stateful or List family.
class StateLowering : NodeLowering {
 public:
  using NodeLowering::NodeLowering;
  void stateful();
  void list();

 private:
  llvm::Value* tensor_arg(const LVal& v);  // a JitArg on the stack
};

}  // namespace

void Emitter::lower_stateful(Scope& s, uint32_t i) { StateLowering(*this, s, i).stateful(); }
void Emitter::lower_list(Scope& s, uint32_t i) { StateLowering(*this, s, i).list(); }

llvm::Value* StateLowering::tensor_arg(const LVal& v) {
  llvm::Value* arg = e_.stack_alloc(16);
  fill_arg(arg, v);
  return arg;
}

void StateLowering::stateful() {
  const int32_t id = s_.node_id(i_);
  // A Variable's or a Generator's VariableState is per call data (the backend's consts table),
  // not a constant in the code: the object code stays independent of the process (disk cache).
  auto state = [&] {
    return b_.CreateLoad(b_.getPtrTy(), b_.CreateInBoundsGEP(b_.getPtrTy(), e_.ctx_field(CtxField::Consts), e_.i64(id)));
  };
  // The node's result, of its static type.
  auto static_result = [&] {
    LVal out;
    out.dtype = n_.outputs[0].dtype;
    out.dims = e_.static_dims(n_.outputs[0].shape);
    return out;
  };
  switch (n_.op) {
    case OpKind::ReadVariable:
    case OpKind::AssignVariable:
    case OpKind::AssignAddVariable:
    case OpKind::AssignSubVariable: {
      llvm::Value* var = state();
      LVal out = static_result();
      const ValuePlan& vp = s_.plan->values[i_][0];
      // The value read in place, held in the call's slot until its last use (plan.h, Borrowed).
      auto borrow = [&] {
        out.kind = LVal::Kind::Buf;
        out.ptr = b_.CreateCall(e_.runtime("agc_rt_var_borrow"), {e_.ctx(), e_.i32(vp.slot), var});
        s_.values[i_] = {out};
      };
      const bool borrowed = vp.storage == ValueStorage::Borrowed;
      if (n_.op == OpKind::ReadVariable) {
        if (borrowed) return borrow();
        llvm::Value* ptr = e_.result_buffer(s_, i_, out.dims);
        b_.CreateCall(e_.runtime("agc_rt_var_read"), {var, ptr});
        return e_.finish_result(s_, i_, out, ptr);
      }
      const ValueStorage st = vp.storage;
      if (n_.op == OpKind::AssignVariable && s_.plan->at(n_.inputs[0]).donated) {
        // The operand's buffer becomes the variable's value (plan.cpp, donate_to_assignments).
        llvm::Value* rc = b_.CreateCall(e_.runtime("agc_rt_var_assign_owned"),
                                        {e_.ctx(), e_.i32(id), var, e_.as_buffer(s_.at(n_.inputs[0])).ptr});
        e_.return_if(b_.CreateICmpNE(rc, e_.i32(0)));
        if (borrowed) return borrow();
        if (!has_uses(s_, i_)) {
          out.kind = LVal::Kind::Buf;  // never read
          s_.values[i_] = {out};
          return;
        }
        llvm::Value* copy = e_.result_buffer(s_, i_, out.dims);  // a small value: copied (plan.cpp)
        b_.CreateCall(e_.runtime("agc_rt_var_read"), {var, copy});
        return e_.finish_result(s_, i_, out, copy);
      }
      const bool unused = !has_uses(s_, i_) && (st == ValueStorage::Reg || st == ValueStorage::Arena);
      llvm::Value* ptr = unused || borrowed ? nullptr : e_.result_buffer(s_, i_, out.dims);
      llvm::Value* result = ptr ? ptr : llvm::ConstantPointerNull::get(b_.getPtrTy());
      // A scalar added to a scalar variable (a staged loop's counter): the helper without the
      // shape dispatch (W7).
      const DType d = out.dtype;
      const TensorType& operand = s_.type(n_.inputs[0]);
      const bool scalar_add = n_.op != OpKind::AssignVariable && out.dims.empty() && operand.shape.rank() == 0 && operand.dtype == d &&
                              (d == DType::Int32 || d == DType::Int64 || d == DType::Float32 || d == DType::Float64);
      if (n_.op != OpKind::AssignVariable && s_.at(n_.inputs[0]).kind == LVal::Kind::Fused) {
        // Updated in place (fusion.h, updates_in_place): the operand computed in the loop over
        // the variable's buffer, which the helper locks (and copies first if a reader shares it).
        llvm::Value* dst = b_.CreateCall(e_.runtime("agc_rt_var_update_begin"), {e_.ctx(), e_.i32(id), var});
        e_.return_if(b_.CreateICmpEQ(dst, llvm::ConstantPointerNull::get(b_.getPtrTy())));
        e_.update_in_place(s_, i_, dst);
        b_.CreateCall(e_.runtime("agc_rt_var_update_end"), {var});
        if (ptr) b_.CreateCall(e_.runtime("agc_rt_var_read"), {var, ptr});
      } else {
        llvm::Value* rc =
            scalar_add ? b_.CreateCall(e_.runtime("agc_rt_var_add_scalar"),
                                       {e_.ctx(), e_.i32(id), e_.i32(n_.op == OpKind::AssignSubVariable), var,
                                        e_.as_buffer(s_.at(n_.inputs[0])).ptr, result})
                       : b_.CreateCall(e_.runtime("agc_rt_var_assign"), {e_.ctx(), e_.i32(id), var, input_args(), result});
        e_.return_if(b_.CreateICmpNE(rc, e_.i32(0)));
      }
      if (borrowed) return borrow();  // the new value, read in place
      if (unused) {
        out.kind = LVal::Kind::Buf;  // never read
        s_.values[i_] = {out};
        return;
      }
      return e_.finish_result(s_, i_, out, ptr);
    }
    case OpKind::RandomUniform:
    case OpKind::RandomNormal: {
      LVal out = static_result();
      if (s_.plan->values[i_][0].storage == ValueStorage::Fused) {
        // Inlined: take the words here (the draw's place among the generator's draws); the
        // consuming loop computes each element from them (lower_random.cpp).
        llvm::Value* words = e_.stack_alloc(16);
        e_.return_if(b_.CreateICmpNE(b_.CreateCall(e_.runtime("agc_rt_random_words"), {e_.ctx(), e_.i32(id), state(), words}), e_.i32(0)));
        out.kind = LVal::Kind::Fused;
        out.reg = e_.stream_mix(b_.CreateLoad(b_.getInt64Ty(), words));
        out.counter = b_.CreateLoad(b_.getInt64Ty(), b_.CreateInBoundsGEP(b_.getInt64Ty(), words, e_.i64(1)));
        s_.values[i_] = {out};
        return;
      }
      llvm::Value* ptr = e_.result_buffer(s_, i_, out.dims);
      e_.return_if(b_.CreateICmpNE(b_.CreateCall(e_.runtime("agc_rt_random"), {e_.ctx(), e_.i32(id), state(), ptr}), e_.i32(0)));
      return e_.finish_result(s_, i_, out, ptr);
    }
    case OpKind::PureCallback:
    case OpKind::IoCallback: {
      LVal out = static_result();
      llvm::Value* ptr = e_.result_buffer(s_, i_, out.dims);
      llvm::Value* rc = b_.CreateCall(e_.runtime("agc_rt_callback"), {e_.ctx(), e_.i32(id), input_args(), ptr});
      e_.return_if(b_.CreateICmpNE(rc, e_.i32(0)));
      return e_.finish_result(s_, i_, out, ptr);
    }
    case OpKind::AllReduce:
    case OpKind::CollectiveBroadcast:
    case OpKind::AllGather: {
      // The engine reads the operand's buffer and writes the node's (MPI_Allreduce from one
      // into the other, or MPI_IN_PLACE in the operand's: no copy on the way); dims are the
      // operand's, times the processes for an all_gather's first.
      LVal out;
      out.dtype = n_.outputs[0].dtype;
      out.dims = s_.at(n_.inputs[0]).dims;
      if (n_.op == OpKind::AllGather) out.dims[0] = b_.CreateMul(out.dims[0], e_.i64(n_.attrs.axis));
      // In place when the operand is read by nothing after (plan.cpp, update_in_place).
      llvm::Value* ptr = s_.plan->values[i_][0].storage == ValueStorage::View ? s_.at(n_.inputs[0]).ptr
                                                                             : e_.result_buffer(s_, i_, out.dims);
      e_.return_if(b_.CreateICmpNE(b_.CreateCall(e_.runtime("agc_rt_collective"), {e_.ctx(), e_.i32(id), input_args(), ptr}), e_.i32(0)));
      return e_.finish_result(s_, i_, out, ptr);
    }
    case OpKind::Print: {
      llvm::Value* rc = b_.CreateCall(e_.runtime("agc_rt_print"), {e_.ctx(), e_.i32(id), input_args()});
      e_.return_if(b_.CreateICmpNE(rc, e_.i32(0)));
      return;
    }
    case OpKind::Assert: {
      // All elements true: the common case costs a loop over the condition and no call.
      const LVal& cond = s_.at(n_.inputs[0]);
      llvm::Value* all = nullptr;
      if (cond.kind == LVal::Kind::Reg) {
        all = cond.reg;
      } else {
        llvm::Value* acc = e_.stack_alloc(1);
        e_.store(DType::Bool, acc, e_.i64(0), b_.getTrue());
        e_.loop(e_.numel(cond.dims), [&](llvm::Value* k) {
          e_.store(DType::Bool, acc, e_.i64(0), b_.CreateAnd(e_.load(DType::Bool, acc, e_.i64(0)), e_.load(DType::Bool, cond.ptr, k)));
        });
        all = e_.load(DType::Bool, acc, e_.i64(0));
      }
      llvm::Value* failed = b_.CreateNot(all);
      e_.if_then(failed, [&] { b_.CreateCall(e_.runtime("agc_rt_assert_failed"), {e_.ctx(), e_.i32(id), input_args()}); });
      e_.return_if(failed);
      return;
    }
    default: throw InternalError("jit: no native lowering for " + std::string(op_name(n_.op)));
  }
}

void StateLowering::list() {
  const int32_t id = s_.node_id(i_);
  auto index = [&] { return b_.CreateSExtOrTrunc(e_.as_register(s_.at(n_.inputs[1])), b_.getInt64Ty()); };
  auto check = [&](llvm::Value* rc) { e_.return_if(b_.CreateICmpNE(rc, e_.i32(0))); };
  // A List result is the handle the helper put in the node's slot.
  auto list_result = [&] {
    LVal out;
    out.kind = LVal::Kind::Slot;
    out.dtype = DType::List;
    out.slot = s_.plan->values[i_][0].slot;
    s_.values[i_] = {out};
  };
  switch (n_.op) {
    case OpKind::Const:  // a TensorArray captured as a constant
      check(b_.CreateCall(e_.runtime("agc_rt_list_const"), {e_.ctx(), e_.i32(id)}));
      return list_result();
    case OpKind::ListWrite:
      check(b_.CreateCall(e_.runtime("agc_rt_list_write"), {e_.ctx(), e_.i32(id), index(), tensor_arg(s_.at(n_.inputs[2]))}));
      return list_result();
    case OpKind::ListSize: {
      LVal out;
      out.kind = LVal::Kind::Reg;
      out.dtype = n_.outputs[0].dtype;
      out.reg = b_.CreateTrunc(b_.CreateCall(e_.runtime("agc_rt_list_size"), {e_.ctx(), e_.i32(id)}), b_.getInt32Ty());
      s_.values[i_] = {out};
      return;
    }
    case OpKind::ListRead:
    case OpKind::ListStack: {
      // The helper points at the data inside the list; it is copied out before anything else
      // runs, so a later write to the list cannot change this value.
      const TensorType& t = n_.outputs[0];
      llvm::Value* dims = e_.stack_alloc(std::max<int64_t>(t.shape.rank(), 1) * 8);
      llvm::Value* data_slot = e_.stack_alloc(8);
      check(n_.op == OpKind::ListRead
                ? b_.CreateCall(e_.runtime("agc_rt_list_read"), {e_.ctx(), e_.i32(id), index(), dims, data_slot})
                : b_.CreateCall(e_.runtime("agc_rt_list_stack"), {e_.ctx(), e_.i32(id), dims, data_slot}));
      llvm::Value* src = b_.CreateLoad(b_.getPtrTy(), data_slot);
      if (n_.op == OpKind::ListRead && is_register_type(t)) {  // a read always points at data
        s_.values[i_] = {e_.described_value(t, src, dims)};
        return;
      }
      LVal out;
      out.dtype = t.dtype;
      out.dims = e_.described_dims(t, dims);
      llvm::Value* ptr = e_.result_buffer(s_, i_, out.dims);
      llvm::Value* bytes = e_.byte_size(t.dtype, out.dims);
      llvm::Value* none = b_.CreateICmpEQ(src, llvm::ConstantPointerNull::get(b_.getPtrTy()));
      e_.if_then(none, [&] { b_.CreateMemSet(ptr, b_.getInt8(0), bytes, llvm::MaybeAlign(1)); });  // stack: nothing written
      e_.if_then(b_.CreateNot(none), [&] { e_.copy_bytes(ptr, src, bytes); });
      return e_.finish_result(s_, i_, out, ptr);
    }
    default: throw InternalError("jit: no TensorArray lowering for " + std::string(op_name(n_.op)));
  }
}

}  // namespace ag::jit
