// Fused elementwise loops emitted as vector code. A float expression over a 1-D walk (every
// buffer read contiguously or broadcast) is computed a target register of elements at a time,
// so LLVM's loop vectorizer has nothing left to do: whole blocks as plain vector loads and
// stores, and the last, partial block under a mask of the elements left (AVX-512, where masked
// loads and stores are plain instructions) or element by element (elsewhere); a static size of
// whole blocks has no partial form. Every block under
// a mask, one copy of the body, ran W3's cheap chain 1.6x slower on Zen 4 (masked stores).
// The values are those of the scalar loop, lane by lane: the same operations on each element,
// in the same order (no reassociation), the same fmuladd contractions.
#include "emitter.h"

#include <cstdlib>
#include <string_view>

namespace ag::jit {
namespace {

// AG_JIT_VECTOR_LOOPS=0: every loop stays scalar, for LLVM's vectorizer (the reference the tests
// compare against, bit for bit). Read per loop: a test may change it between compiles.
bool vector_loops_enabled() {
  const char* e = std::getenv("AG_JIT_VECTOR_LOOPS");
  return !(e && std::string_view(e) == "0");
}

// Ops whose scalar_op form is the same IR on vectors (IRBuilder's operations and intrinsics
// take vector operands; constants come from the operands' types). Not here: integer ops (their
// checked division branches per element), casts (scalar_op names scalar types), and exp, log,
// sin, cos, pow and float64 tanh, which the vectorizer maps to libmvec calls a vector intrinsic
// would not reach.
bool vector_op(OpKind op, DType d) {
  switch (op) {
    case OpKind::Neg:
    case OpKind::Abs:
    case OpKind::Square:
    case OpKind::Relu:
    case OpKind::Sign:
    case OpKind::Sqrt:
    case OpKind::Floor:
    case OpKind::Ceil:
    case OpKind::Round:
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Maximum:
    case OpKind::Minimum:
    case OpKind::Less:
    case OpKind::LessEqual:
    case OpKind::Greater:
    case OpKind::GreaterEqual:
    case OpKind::Equal:
    case OpKind::NotEqual:
    case OpKind::LogicalAnd:
    case OpKind::LogicalOr:
    case OpKind::LogicalXor:
    case OpKind::LogicalNot:
    case OpKind::Select:
    case OpKind::Fill:
    case OpKind::FillLike: return true;
    case OpKind::Tanh: return d == DType::Float32;
    default: return false;
  }
}

}  // namespace

// Whether v's elements can be computed as vectors in a loop of float dtype `d` (conditions in
// between are bool vectors).
bool Emitter::vectorizable(Scope& s, ValueId v, DType d) const {
  const LVal& lv = s.at(v);
  switch (lv.kind) {
    case LVal::Kind::Reg:
    case LVal::Kind::Buf: return lv.dtype == d;  // not a bool operand: a bool in memory is a byte
    case LVal::Kind::Fused: {
      if (lv.counter) return false;  // a fused random draw: its own counter walk
      const Node& n = s.graph().nodes[v.node];
      const DType out = n.outputs[0].dtype;
      if (out != d && out != DType::Bool) return false;
      if (!vector_op(n.op, out == DType::Bool && !n.inputs.empty() ? s.type(n.inputs.back()).dtype : out)) return false;
      for (ValueId in : n.inputs)
        if (!vectorizable(s, in, d)) return false;
      return true;
    }
    default: return false;
  }
}

llvm::Value* Emitter::eval_vector(Scope& s, ValueId v, const Walk& w, llvm::Value* base, unsigned lanes, llvm::Value* mask,
                                  std::vector<std::pair<const LVal*, llvm::Value*>>& loaded) {
  const LVal& lv = s.at(v);
  auto splat = [&](llvm::Value* x) { return b_.CreateVectorSplat(lanes, x); };
  switch (lv.kind) {
    case LVal::Kind::Reg: return splat(lv.reg);
    case LVal::Kind::Buf: {
      for (const auto& [buffer, vector] : loaded)
        if (buffer == &lv) return vector;
      const std::vector<llvm::Value*>* strides = w.find(&lv);
      if (!strides) throw InternalError("jit: an operand missing from its vector loop's walk");
      llvm::Value* vector = nullptr;
      if (is_const((*strides)[0], 0)) {
        vector = splat(load(lv.dtype, lv.ptr, i64(0)));  // broadcast
      } else {
        llvm::Type* et = mem_type(lv.dtype);
        llvm::Type* vt = llvm::FixedVectorType::get(et, lanes);
        llvm::Value* ptr = b_.CreateInBoundsGEP(et, lv.ptr, base);
        const llvm::Align align(dtype_size(lv.dtype));
        if (mask) vector = b_.CreateMaskedLoad(vt, ptr, align, mask, llvm::Constant::getNullValue(vt));
        else vector = b_.CreateAlignedLoad(vt, ptr, align);
      }
      loaded.emplace_back(&lv, vector);
      return vector;
    }
    case LVal::Kind::Fused: {
      const Node& n = s.graph().nodes[v.node];
      if (n.op == OpKind::FillLike)
        return splat(constant(lv.dtype, n.attrs.scalar, static_cast<int64_t>(n.attrs.scalar)));
      std::vector<llvm::Value*> args;
      for (ValueId in : n.inputs) args.push_back(eval_vector(s, in, w, base, lanes, mask, loaded));
      const DType in = n.inputs.empty() ? lv.dtype : s.type(n.inputs.back()).dtype;
      return scalar_op(n, s.node_id(v.node), in, args);
    }
    default: throw InternalError("jit: a vector loop reads a value without elements");
  }
}

bool Emitter::lower_elementwise_vector(Scope& s, uint32_t i, const LVal& out, const Walk& w) {
  const Node& n = s.graph().nodes[i];
  const DType d = out.dtype;
  if (!vector_loops_enabled() || !is_floating(d) || w.dims.size() != 1 || n.op == OpKind::FillLike) return false;
  for (const auto& [leaf, strides] : w.strides)
    if (!is_const(strides[0], 0) && !is_const(strides[0], 1)) return false;  // dynamic broadcast
  const unsigned lanes = static_cast<unsigned>(vector_bytes_ / static_cast<int64_t>(dtype_size(d)));
  llvm::Value* count = w.dims[0];
  if (lanes < 2 || (llvm::isa<llvm::ConstantInt>(count) && llvm::cast<llvm::ConstantInt>(count)->getSExtValue() < lanes))
    return false;
  if (!vector_op(n.op, d)) return false;
  for (ValueId in : n.inputs)
    if (!vectorizable(s, in, d)) return false;

  const bool masked = vector_bytes_ == 64;  // AVX-512: the partial block under a mask
  const llvm::Align align(dtype_size(d));
  const DType in = n.inputs.empty() ? d : s.type(n.inputs.back()).dtype;
  llvm::Value* blocks = b_.CreateUDiv(b_.CreateAdd(count, i64(lanes - 1)), i64(lanes));
  std::vector<llvm::Constant*> lane_index;
  for (unsigned l = 0; l < lanes; ++l) lane_index.push_back(b_.getInt64(l));
  llvm::Constant* lane_ids = llvm::ConstantVector::get(lane_index);
  const bool was = emitting_vectors_;
  emitting_vectors_ = true;
  auto vector_block = [&](llvm::Value* base, llvm::Value* mask) {
    std::vector<std::pair<const LVal*, llvm::Value*>> loaded;
    std::vector<llvm::Value*> args;
    for (ValueId v : n.inputs) args.push_back(eval_vector(s, v, w, base, lanes, mask, loaded));
    llvm::Value* value = scalar_op(n, s.node_id(i), in, args);
    llvm::Value* ptr = b_.CreateInBoundsGEP(mem_type(d), out.ptr, base);
    if (mask) b_.CreateMaskedStore(value, ptr, align, mask);
    else b_.CreateAlignedStore(value, ptr, align);
  };
  parallel_loop_nest({blocks}, out.ptr, [&](const std::vector<llvm::Value*>& idx) {
    llvm::Value* base = b_.CreateMul(idx[0], i64(lanes), "vec.base", /*HasNUW=*/true, /*HasNSW=*/true);
    if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(count); c && c->getSExtValue() % lanes == 0) {
      vector_block(base, nullptr);  // whole blocks only: no partial form to compile
      return;
    }
    llvm::Value* left = b_.CreateSub(count, base);
    if_else(b_.CreateICmpSGE(left, i64(lanes)), [&] { vector_block(base, nullptr); }, [&] {
      if (masked) {  // the last, partial block under a mask of the elements left
        vector_block(base, b_.CreateICmpSLT(lane_ids, b_.CreateVectorSplat(lanes, left)));
        return;
      }
      loop(left, [&](llvm::Value* k) {  // the last, partial block, element by element
        const std::vector<llvm::Value*> idx1 = {b_.CreateAdd(base, k)};
        std::vector<llvm::Value*> args;
        for (ValueId v : n.inputs) args.push_back(eval_element(s, v, w, idx1));
        store(d, out.ptr, idx1[0], scalar_op(n, s.node_id(i), in, args));
      });
    });
  }, i64(lanes));
  emitting_vectors_ = was;
  return true;
}

}  // namespace ag::jit
