// Run-time shapes under NumPy broadcasting: dims are constants where the static type knows them
// (the compatibility checks fold away) and loaded from descriptors where it does not.
#include "emitter.h"

namespace ag::jit {

std::vector<llvm::Value*> Emitter::broadcast_lists(const std::vector<const std::vector<llvm::Value*>*>& inputs,
                                                   const Shape& out, int32_t node_id) {
  const int64_t rank = out.rank();
  std::vector<llvm::Value*> dims(static_cast<size_t>(rank));
  for (int64_t j = 0; j < rank; ++j) {
    llvm::Value* d = nullptr;
    for (const std::vector<llvm::Value*>* id : inputs) {
      const int64_t a = j - (rank - static_cast<int64_t>(id->size()));
      if (a < 0) continue;
      llvm::Value* dk = (*id)[static_cast<size_t>(a)];
      if (!d) {
        d = dk;
        continue;
      }
      llvm::Value* ok = b_.CreateOr(b_.CreateICmpEQ(d, dk), b_.CreateOr(b_.CreateICmpEQ(d, i64(1)), b_.CreateICmpEQ(dk, i64(1))));
      fail_if(b_.CreateNot(ok), node_id, FailKind::Broadcast, d, dk);
      d = b_.CreateSelect(b_.CreateICmpEQ(d, i64(1)), dk, d);
    }
    dims[static_cast<size_t>(j)] = out[j] >= 0 ? i64(out[j]) : d ? d : i64(1);
  }
  return dims;
}

std::vector<llvm::Value*> Emitter::broadcast_dims(Scope& s, uint32_t i) {
  const Node& n = s.graph().nodes[i];
  const TensorType& out = n.outputs[0];
  if (n.op == OpKind::Fill) return static_dims(out.shape);
  if (n.op == OpKind::FillLike) return s.at(n.inputs[0]).dims;
  std::vector<const std::vector<llvm::Value*>*> inputs;
  for (ValueId in : n.inputs) inputs.push_back(&s.at(in).dims);
  return broadcast_lists(inputs, out.shape, s.node_id(i));
}

}  // namespace ag::jit
