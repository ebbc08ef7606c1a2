// Parallel elementwise loops. A large (or dynamic) materialized elementwise loop is emitted inline
// like any other, its outer range read from two stack slots; when the entry function is complete,
// LLVM's CodeExtractor moves the loop into a function of its live-in values, inlined into a worker
// `void(closure, begin, end)` that loads them from a closure struct and runs it for one range. The
// loop's place then calls agc_rt_parallel_for(worker, closure, outer, grain), which splits the outer
// range over the shared thread pool (or runs it whole on one thread, or when small).
//
// Only loops that cannot fail and write nothing but their output buffers are split: chunks write
// disjoint ranges of them, so the result is the serial one bit for bit. Anything else (an error exit,
// a store to a stack temporary, a call that writes memory) keeps the loop inline and serial.
#include <llvm/ADT/SetVector.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/IntrinsicsX86.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/CodeExtractor.h>

#include <algorithm>
#include <string>
#include <unordered_set>

#include "ag/detail/parallel.h"
#include "../optimizer.h"
#include "emitter.h"

namespace ag::jit {
namespace {

// Below two grains a loop stays inline (the pool's hand-off costs a few microseconds); the same
// grain as the eager kernels (docs/jit.md, "Threads"). An elementwise loop of a static size from
// 1.5 grains splits in two chunks of half of it: a stencil's 254 x 254 interior, just under two grains, ran on one
// thread (a split costs ~3.5 µs on a 2-vCPU VM, half of that loop's time).
constexpr int64_t kParallelGrain = detail::kElementwiseGrain;
// A loop of reduced rows (LoopWork::ReducedRows: row reductions, products in vector registers,
// arg-reductions) counts the elements it reads, which cost less than an elementwise loop's
// (no store per element): 4 of them make a grain. With the elementwise grain, logistic
// regression's [4096, 16] product split every step and ran slower on two threads than on one.
constexpr int64_t kReductionGrain = 4 * kParallelGrain;
// A loop whose every index runs a loop of its own (a While run element by element) counts a
// grain per 1K indices, as if each ran 32 iterations: Mandelbrot's 64K points split into chunks
// a thread claims as it finishes one (rows near the set run 100 iterations, others 2).
constexpr int64_t kLoopsGrain = kParallelGrain / 32;
// A loop over one flat dim is the loop LLVM vectorizes, with a scalar remainder at the end of
// each chunk: libmvec's vector exp/sin/... and libm's scalar ones differ in the last bit for
// some inputs, so chunk bounds that moved with the thread count changed results (the wide
// random graphs: sin, exp and sigmoid, 1 against 3 threads). Bounds at multiples of 1024
// elements leave every chunk but the last without a remainder and the last with the one a
// single thread has (a vector loop's step, VF x interleave, is a power of two up to 1024).
constexpr int64_t kFlatChunkUnit = 1024;

int64_t static_product(const std::vector<llvm::Value*>& dims) {
  int64_t total = 1;
  for (llvm::Value* d : dims) {
    auto* c = llvm::dyn_cast<llvm::ConstantInt>(d);
    if (!c) return -1;
    total *= c->getSExtValue();
  }
  return total;
}

void drop_inlined_suffix(llvm::Value& v) {
  const std::string name = v.getName().str();
  if (name.ends_with(".i")) v.setName(name.substr(0, name.size() - 2));
}

}  // namespace

void Codegen::parallel_loop_nest(const std::vector<llvm::Value*>& dims, const std::vector<llvm::Value*>& outs,
                                 const std::function<void(const std::vector<llvm::Value*>&)>& body,
                                 llvm::Value* inner_work, LoopWork kind) {
  std::vector<llvm::Value*> work = dims;
  if (inner_work) work.push_back(inner_work);
  const int64_t total = static_product(work);
  const int64_t grain = kind == LoopWork::ReducedRows ? kReductionGrain : kind == LoopWork::Loops ? kLoopsGrain : kParallelGrain;
  // Measured on elementwise loops only: the others keep two grains.
  const int64_t least = kind == LoopWork::Elementwise ? 3 * grain / 2 : 2 * grain;
  if (dims.empty() || (total >= 0 && total < least)) {
    loop_nest(dims, body);
    return;
  }
  llvm::Value* work_per_outer = inner_work ? numel(std::vector<llvm::Value*>(work.begin() + 1, work.end())) : nullptr;
  if (total >= 0) {
    splittable_loop_nest(dims, outs, body, work_per_outer, std::min(grain, total / 2));
    return;
  }
  // A size known only at run time: the splittable loop when it is large, else the same loop
  // inline (a staged loop over a scalar of unknown shape must not pay a call per iteration).
  llvm::BasicBlock* large = llvm::BasicBlock::Create(ctx_ref_, "par.large", fn_);
  llvm::BasicBlock* small = llvm::BasicBlock::Create(ctx_ref_, "par.small", fn_);
  llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx_ref_, "par.join", fn_);
  b_.CreateCondBr(b_.CreateICmpSGE(numel(work), i64(2 * grain)), large, small);
  b_.SetInsertPoint(small);
  loop_nest(dims, body);
  b_.CreateBr(join);
  b_.SetInsertPoint(large);
  splittable_loop_nest(dims, outs, body, work_per_outer, grain);
  b_.CreateBr(join);
  b_.SetInsertPoint(join);
}

void Codegen::splittable_loop_nest(const std::vector<llvm::Value*>& dims, const std::vector<llvm::Value*>& outs,
                                   const std::function<void(const std::vector<llvm::Value*>&)>& body,
                                   llvm::Value* work_per_outer, int64_t grain) {
  ParallelLoop p;
  p.outs = outs;
  p.grain = grain > 0 ? grain : kParallelGrain;
  p.emitted_vectors = emitting_vectors_;
  p.outer = dims[0];
  const std::vector<llvm::Value*> rest(dims.begin() + 1, dims.end());
  p.inner_elements = work_per_outer ? work_per_outer : numel(rest);
  if (rest.empty() && !work_per_outer) p.unit = kFlatChunkUnit;  // its grain is kParallelGrain >= the unit
  p.lo_slot = stack_alloc(8);
  p.hi_slot = stack_alloc(8);
  store(DType::Int64, p.lo_slot, i64(0), i64(0));
  store(DType::Int64, p.hi_slot, i64(0), p.outer);
  p.entry = llvm::BasicBlock::Create(ctx_ref_, "par.loop", fn_);
  b_.CreateBr(p.entry);
  b_.SetInsertPoint(p.entry);
  llvm::Value* lo = load(DType::Int64, p.lo_slot, i64(0));
  llvm::Value* hi = load(DType::Int64, p.hi_slot, i64(0));
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx_ref_, "par.outer", fn_);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx_ref_, "par.outer.end", fn_);
  b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), head, done);
  b_.SetInsertPoint(head);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  i->addIncoming(lo, pre);
  const uint64_t latches_before = latches_;
  loop_nest(rest, [&](const std::vector<llvm::Value*>& inner) {
    std::vector<llvm::Value*> idx{i};
    idx.insert(idx.end(), inner.begin(), inner.end());
    body(idx);
  });
  llvm::Value* next = b_.CreateAdd(i, i64(1), "i.next", /*HasNUW=*/true, /*HasNSW=*/true);
  i->addIncoming(next, b_.GetInsertBlock());
  loop_latch(b_.CreateICmpSLT(next, hi), head, done, keep_rolled(latches_before));
  b_.SetInsertPoint(done);
  if (streaming_stores_) store_fence();  // inside the worker: each thread fences its own stores
  p.exit = llvm::BasicBlock::Create(ctx_ref_, "par.end", fn_);
  b_.CreateBr(p.exit);
  b_.SetInsertPoint(p.exit);
  parallel_loops_.push_back(p);
}

void Codegen::outline_parallel_loops() {
  for (size_t k = 0; k < parallel_loops_.size(); ++k) outline_parallel_loop(parallel_loops_[k], static_cast<int>(k));
  parallel_loops_.clear();
}

bool Codegen::outline_parallel_loop(const ParallelLoop& loop, int index) {
  // The loop's blocks: every block from its entry up to its exit, in creation order.
  std::vector<llvm::BasicBlock*> blocks;
  bool inside = false;
  for (llvm::BasicBlock& bb : *fn_) {
    if (&bb == loop.entry) inside = true;
    if (&bb == loop.exit) break;
    if (inside) blocks.push_back(&bb);
  }
  const std::unordered_set<llvm::BasicBlock*> in_loop(blocks.begin(), blocks.end());
  std::vector<const llvm::Value*> out_bases;
  for (llvm::Value* out : loop.outs) out_bases.push_back(llvm::getUnderlyingObject(out));
  for (llvm::BasicBlock* bb : blocks) {
    for (llvm::BasicBlock* succ : llvm::successors(bb))
      if (!in_loop.count(succ) && succ != loop.exit) return false;  // an error exit
    for (llvm::Instruction& inst : *bb) {
      if (!inst.mayWriteToMemory()) continue;
      const llvm::Value* to = nullptr;  // a store, or a masked one (lower_fused_vector.cpp)
      if (auto* st = llvm::dyn_cast<llvm::StoreInst>(&inst)) to = st->getPointerOperand();
      else if (auto* ii = llvm::dyn_cast<llvm::IntrinsicInst>(&inst)) {
        if (ii->getIntrinsicID() == llvm::Intrinsic::masked_store) to = ii->getArgOperand(1);
        else if (ii->getIntrinsicID() == llvm::Intrinsic::x86_sse_sfence) continue;  // streaming stores' fence
      }
      if (!to || std::find(out_bases.begin(), out_bases.end(), llvm::getUnderlyingObject(to)) == out_bases.end()) return false;
    }
  }
  llvm::CodeExtractorAnalysisCache cache(*fn_);
  llvm::CodeExtractor extractor(blocks);
  if (!extractor.isEligible()) return false;
  llvm::SetVector<llvm::Value*> inputs, outputs, allocas;
  extractor.findInputsOutputs(inputs, outputs, allocas);
  if (!outputs.empty()) return false;
  llvm::Function* body = extractor.extractCodeRegion(cache);
  if (!body) return false;
  body->setLinkage(llvm::GlobalValue::InternalLinkage);
  llvm::CallInst* call = nullptr;
  for (llvm::User* u : body->users())
    if (auto* c = llvm::dyn_cast<llvm::CallInst>(u)) call = c;
  if (!call) throw InternalError("jit: an outlined parallel loop without its call");

  // The closure: one field per argument of the outlined body (the range slots are the worker's).
  std::vector<llvm::Type*> fields;
  for (llvm::Value* a : call->args()) fields.push_back(a->getType());
  llvm::StructType* closure_type = llvm::StructType::get(ctx_ref_, fields);
  llvm::IRBuilder<> eb(entry_, entry_->begin());
  llvm::AllocaInst* closure = eb.CreateAlloca(closure_type);
  llvm::IRBuilder<> cb(call);
  for (unsigned j = 0; j < call->arg_size(); ++j) {
    llvm::Value* a = call->getArgOperand(j);
    if (a == loop.lo_slot || a == loop.hi_slot) continue;
    cb.CreateStore(a, cb.CreateStructGEP(closure_type, closure, j));
  }

  auto* worker_type = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
  llvm::Function* worker = llvm::Function::Create(worker_type, llvm::GlobalValue::InternalLinkage,
                                                  "agc_parallel_loop." + std::to_string(index), module_);
  worker->addFnAttr(llvm::Attribute::NoUnwind);
  // Called through agc_rt_parallel_for only, and a kernel the module split may send to the
  // second thread (module_split.cpp): n-body's nests then compile beside its entry.
  worker->addFnAttr(llvm::Attribute::NoInline);
  // Their addresses mean nothing: the optimizer may merge identical loops (optimizer.cpp).
  worker->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  // The worker of agc's own vector loop (lower_fused_vector.cpp) is compiled as emitted: the
  // optimizer's function passes had nothing to vectorize in it and took most of the tanh chain's
  // optimization (docs/performance.md, "Measured decisions": vector loop worker).
  if (loop.emitted_vectors) mark_emitted_optimized(*worker);
  llvm::IRBuilder<> wb(llvm::BasicBlock::Create(ctx_ref_, "entry", worker));
  llvm::Value* begin_slot = wb.CreateAlloca(wb.getInt64Ty());
  llvm::Value* end_slot = wb.CreateAlloca(wb.getInt64Ty());
  wb.CreateStore(worker->getArg(1), begin_slot);
  wb.CreateStore(worker->getArg(2), end_slot);
  std::vector<llvm::Value*> args;
  for (unsigned j = 0; j < call->arg_size(); ++j) {
    llvm::Value* a = call->getArgOperand(j);
    if (a == loop.lo_slot) args.push_back(begin_slot);
    else if (a == loop.hi_slot) args.push_back(end_slot);
    else args.push_back(wb.CreateLoad(fields[j], wb.CreateStructGEP(closure_type, worker->getArg(0), j)));
  }
  llvm::CallInst* run = wb.CreateCall(body, args);
  wb.CreateRetVoid();
  // The loop itself in the worker: one function per parallel loop, not a worker calling the
  // loop's body. Each function costs the code generator its passes' fixed work: the tanh
  // chain's module of three functions took 3.4-3.6 ms to compile, of two 2.9-3.1 ms.
  llvm::InlineFunctionInfo inlined;
  if (!llvm::InlineFunction(*run, inlined).isSuccess()) throw InternalError("jit: a parallel loop's body not inlined into its worker");
  // Inlining suffixes the body's names with ".i": the loop's blocks keep the names the emitter
  // gave them ("columns", "tiles"), which inspection shows.
  for (llvm::BasicBlock& bb : *worker) {
    drop_inlined_suffix(bb);
    for (llvm::Instruction& inst : bb) drop_inlined_suffix(inst);
  }

  // grain in outer iterations: the loop's grain in elements, at least one row.
  llvm::Value* inner = cb.CreateSelect(cb.CreateICmpSGT(loop.inner_elements, i64(0)), loop.inner_elements, i64(1));
  llvm::Value* grain = cb.CreateSDiv(i64(loop.grain), inner);
  grain = cb.CreateSelect(cb.CreateICmpSGT(grain, i64(0)), grain, i64(1));
  cb.CreateCall(runtime("agc_rt_parallel_for"), {worker, closure, loop.outer, grain, i64(loop.unit)});
  call->eraseFromParent();
  body->eraseFromParent();
  return true;
}

// sfence: non-temporal stores are weakly ordered, and the pool's completion flag (a release
// store) does not order them on x86.
void Codegen::store_fence() { b_.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {}); }

}  // namespace ag::jit
