// Codegen control flow: counted loops (their unrolling hints), loops carrying a register,
// loop nests, branches, and the error exits of compiled code.
#include <llvm/IR/MDBuilder.h>

#include "codegen.h"

namespace ag::jit {

// The longest innermost loop of constant count that is unrolled whole. 64 compiled the
// transformer block 40% slower than 16 and ran nothing faster; a longer loop over contiguous
// elements is better left to LLVM's loop vectorizer (a row sum of 16 floats: 23.7 µs for 4096
// rows unrolled into scalar adds, 8.1 µs vectorized).
constexpr int64_t kFullUnrollCount = 8;

void Codegen::loop(llvm::Value* n, const std::function<void(llvm::Value*)>& body) {
  if (is_const(n, 0)) return;
  if (is_const(n, 1)) {
    body(i64(0));
    return;
  }
  loop_carry(n, {}, [&](const std::vector<llvm::Value*>&, llvm::Value* i) {
    body(i);
    return std::vector<llvm::Value*>{};
  }, "loop");
}

llvm::Value* Codegen::loop_reduce(llvm::Value* n, llvm::Value* init,
                                  const std::function<llvm::Value*(llvm::Value*, llvm::Value*)>& step) {
  return loop_carry(n, {init}, [&](const std::vector<llvm::Value*>& acc, llvm::Value* i) {
    return std::vector<llvm::Value*>{step(acc[0], i)};
  })[0];
}

std::vector<llvm::Value*> Codegen::loop_carry(
    llvm::Value* n, const std::vector<llvm::Value*>& init,
    const std::function<std::vector<llvm::Value*>(const std::vector<llvm::Value*>&, llvm::Value*)>& step,
    const char* name, bool rolled) {
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx_ref_, name, fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_ref_, std::string(name) + ".end", fn);
  b_.CreateCondBr(b_.CreateICmpSGT(n, i64(0)), head, exit);
  b_.SetInsertPoint(head);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  i->addIncoming(i64(0), pre);
  std::vector<llvm::PHINode*> phis;
  std::vector<llvm::Value*> acc;
  for (llvm::Value* v : init) {
    phis.push_back(b_.CreatePHI(v->getType(), 2, "acc"));
    phis.back()->addIncoming(v, pre);
    acc.push_back(phis.back());
  }
  const uint64_t latches_before = latches_;
  const std::vector<llvm::Value*> next_acc = step(acc, i);
  llvm::Value* next = b_.CreateAdd(i, i64(1), "i.next", /*HasNUW=*/true, /*HasNSW=*/true);
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  i->addIncoming(next, latch);
  for (size_t k = 0; k < phis.size(); ++k) phis[k]->addIncoming(next_acc[k], latch);
  // A vector loop's innermost loop (its blocks, or a row's last elements) is not unrolled: LLVM
  // fully unrolled 63 blocks of 1007 floats into 63 copies of the body, code to compile that ran
  // no faster. Its outer loops follow the program's rule like any other.
  const bool vector_inner = emitting_vectors_ && latches_ == latches_before;
  // A short innermost loop of constant count is unrolled whole (the only unrolling there is:
  // optimizer.cpp): k-means' eight distances of a point, n-body's three coordinates.
  const auto* count = llvm::dyn_cast<llvm::ConstantInt>(n);
  const bool full = count && count->getSExtValue() <= kFullUnrollCount && latches_ == latches_before && !vector_inner && !rolled;
  loop_latch(b_.CreateICmpSLT(next, n), head, exit, rolled || vector_inner || keep_rolled(latches_before), full);
  b_.SetInsertPoint(exit);
  std::vector<llvm::Value*> result;
  for (size_t k = 0; k < phis.size(); ++k) {
    llvm::PHINode* r = b_.CreatePHI(init[k]->getType(), 2, "red.result");
    r->addIncoming(init[k], pre);
    r->addIncoming(next_acc[k], latch);
    result.push_back(r);
  }
  return result;
}

// Runtime unrolling copies a loop's body once more for its remainder; the vectorizer already
// leaves a scalar remainder of fewer than one vector, and LLVM then unrolled that one too. Each
// copy is code the code generator must compile: the tanh chain's kernel went from 15 blocks to
// 13 and its instruction selection and scheduling time fell by a quarter (docs/jit.md, "Compile
// times"). Full unrolling of short constant loops is not affected, except for outer loops in a
// program with rolled loops: LLVM fully unrolls a short loop around a vectorized one, and in a
// function of hundreds of loop nests the straight-line code that makes cost compile time that
// grew faster than the graph (Program::rolled_loops).
void Codegen::loop_latch(llvm::Value* continue_loop, llvm::BasicBlock* head, llvm::BasicBlock* exit, bool rolled, bool full) {
  ++latches_;
  llvm::BranchInst* br = b_.CreateCondBr(continue_loop, head, exit);
  const char* hint = full ? "llvm.loop.unroll.full" : rolled ? "llvm.loop.unroll.disable" : "llvm.loop.unroll.runtime.disable";
  std::vector<llvm::Metadata*> ops = {nullptr, llvm::MDNode::get(ctx_ref_, llvm::MDString::get(ctx_ref_, hint))};
  if (emitting_vectors_)  // already vector code, or a remainder shorter than a vector
    ops.push_back(llvm::MDNode::get(ctx_ref_, {llvm::MDString::get(ctx_ref_, "llvm.loop.vectorize.enable"),
                                               llvm::ConstantAsMetadata::get(b_.getFalse())}));
  llvm::MDNode* id = llvm::MDNode::getDistinct(ctx_ref_, ops);
  id->replaceOperandWith(0, id);
  br->setMetadata(llvm::LLVMContext::MD_loop, id);
}

void Codegen::loop_nest(const std::vector<llvm::Value*>& dims,
                        const std::function<void(const std::vector<llvm::Value*>&)>& body) {
  std::vector<llvm::Value*> idx;
  std::function<void(size_t)> level = [&](size_t d) {
    if (d == dims.size()) {
      body(idx);
      return;
    }
    loop(dims[d], [&](llvm::Value* i) {
      idx.push_back(i);
      level(d + 1);
      idx.pop_back();
    });
  };
  level(0);
}

void Codegen::if_then(llvm::Value* cond, const std::function<void()>& then) {
  if_else(cond, then, [] {});  // the empty else block is folded away by LLVM
}

void Codegen::if_else(llvm::Value* cond, const std::function<void()>& then, const std::function<void()>& otherwise) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(cond)) {
    c->isZero() ? otherwise() : then();
    return;
  }
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* yes = llvm::BasicBlock::Create(ctx_ref_, "then", fn);
  llvm::BasicBlock* no = llvm::BasicBlock::Create(ctx_ref_, "else", fn);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_ref_, "endif", fn);
  b_.CreateCondBr(cond, yes, no);
  b_.SetInsertPoint(yes);
  then();
  b_.CreateBr(done);
  b_.SetInsertPoint(no);
  otherwise();
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
}

void Codegen::fail_if(llvm::Value* cond, int32_t node_id, FailKind kind, llvm::Value* a, llvm::Value* bval) {
  if (auto* c = llvm::dyn_cast<llvm::ConstantInt>(cond); c && c->isZero()) return;
  auto as_i64 = [&](llvm::Value* v) { return v ? b_.CreateSExtOrTrunc(v, b_.getInt64Ty()) : i64(0); };
  exit_if(cond, "fail", [&] {
    b_.CreateCall(runtime("agc_rt_fail"), {ctx_, i32(node_id), i32(static_cast<int32_t>(kind)), as_i64(a), as_i64(bval)});
  });
}

void Codegen::return_if(llvm::Value* cond) { exit_if(cond, "failed", [] {}); }

// `cond ? (before(); return 1) : go on`, the exit marked cold: calls fail rarely.
void Codegen::exit_if(llvm::Value* cond, const char* name, const std::function<void()>& before) {
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx_ref_, name, fn);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx_ref_, "ok", fn);
  llvm::MDBuilder md(ctx_ref_);
  b_.CreateCondBr(cond, exit, ok, md.createBranchWeights(1, 1 << 20));
  b_.SetInsertPoint(exit);
  before();
  b_.CreateRet(i32(1));
  b_.SetInsertPoint(ok);
}

}  // namespace ag::jit
