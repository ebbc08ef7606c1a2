// Splitting a module's kernels (and a large entry function's loop nests, moved into functions of
// their own first) off for a second thread, and the object bundle of a split module. An
// LLVMContext is not thread-safe: the second module crosses to its thread as bitcode and is read
// into a context of its own.
#include "module_split.h"

#include <llvm/ADT/DepthFirstIterator.h>
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instruction.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/CodeExtractor.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "abi.h"
#include "ag/error.h"
#include "optimizer.h"

namespace ag::jit {
namespace {

size_t instructions(const llvm::Function& f) {
  size_t n = 0;
  for (const llvm::BasicBlock& bb : f) n += bb.size();
  return n;
}

// Whether a function on the other side of the split than `v`'s uses it (directly or through
// constants); `moves`: whether `v` is in `part`, the functions that move.
bool used_across(const llvm::Value& v, const std::set<const llvm::Function*>& part, bool moves) {
  for (const llvm::User* u : v.users()) {
    if (const auto* i = llvm::dyn_cast<llvm::Instruction>(u)) {
      if ((part.count(i->getFunction()) > 0) != moves) return true;
    } else if (llvm::isa<llvm::Constant>(u) && used_across(*u, part, moves)) {
      return true;
    }
  }
  return false;
}

// CodeExtractor passes each value the rest of the entry reads back through a pointer argument,
// stored right after its definition: in a loop, a store every iteration (a checked index kept
// for the error message, a reduction's accumulators), which LLVM cannot move (the pointer might
// alias the loop's buffers) and the optimizer never sees in agc's own vector nests. The caller
// reads them only after the call returns, and reads a value only on a path its definition
// dominates: one store before each return the definition dominates writes the same values.
void store_outputs_at_returns(llvm::Function& fn, size_t outputs) {
  if (outputs == 0 || outputs > fn.arg_size()) return;
  std::vector<llvm::StoreInst*> stores;
  for (size_t a = fn.arg_size() - outputs; a < fn.arg_size(); ++a) {
    llvm::Argument* out = fn.getArg(static_cast<unsigned>(a));
    for (llvm::User* u : out->users()) {
      auto* st = llvm::dyn_cast<llvm::StoreInst>(u);
      if (!st || st->getPointerOperand() != out) return;  // not CodeExtractor's form: leave it
      stores.push_back(st);
    }
  }
  std::vector<llvm::ReturnInst*> rets;
  for (llvm::BasicBlock& bb : fn)
    if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator())) rets.push_back(ret);
  const llvm::DominatorTree dt(fn);
  for (llvm::StoreInst* st : stores) {
    auto* def = llvm::dyn_cast<llvm::Instruction>(st->getValueOperand());
    for (llvm::ReturnInst* ret : rets)
      if (!def || dt.dominates(def, ret)) llvm::IRBuilder<>(ret).CreateAlignedStore(st->getValueOperand(), st->getPointerOperand(), st->getAlign());
    st->eraseFromParent();
  }
}

// Outlines `blocks` of `entry` as a function named from `name` (internal, noinline), its outputs
// stored once at its returns; null when CodeExtractor cannot.
llvm::Function* outline(llvm::Function& entry, const std::vector<llvm::BasicBlock*>& blocks, const std::string& name) {
  llvm::CodeExtractorAnalysisCache cache(entry);
  llvm::CodeExtractor extractor(blocks, nullptr, false, nullptr, nullptr, nullptr, false, false, nullptr, name);
  if (!extractor.isEligible()) return nullptr;
  llvm::SetVector<llvm::Value*> inputs, outputs;
  llvm::Function* fn = extractor.extractCodeRegion(cache, inputs, outputs);
  if (!fn) return nullptr;
  store_outputs_at_returns(*fn, outputs.size());
  fn->setLinkage(llvm::GlobalValue::InternalLinkage);
  fn->addFnAttr(llvm::Attribute::NoInline);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  return fn;
}

// Whether `l` and every loop inside it is agc's own vector code (lower_fused_vector.cpp,
// lower_reduce_vector.cpp): Codegen::loop_latch marks such a loop, its blocks and its remainder
// alike, llvm.loop.vectorize.enable false, and no other loop.
bool emitted_vector_loops(const llvm::Loop& l) {
  bool marked = false;
  if (const llvm::MDNode* id = l.getLoopID())
    for (const llvm::MDOperand& op : id->operands()) {
      const auto* hint = llvm::dyn_cast_or_null<llvm::MDNode>(op.get());
      if (!hint || hint->getNumOperands() != 2) continue;
      const auto* name = llvm::dyn_cast_or_null<llvm::MDString>(hint->getOperand(0).get());
      const auto* value = llvm::mdconst::dyn_extract_or_null<llvm::ConstantInt>(hint->getOperand(1));
      marked |= name && name->getString() == "llvm.loop.vectorize.enable" && value && value->isZero();
    }
  if (!marked) return false;
  for (const llvm::Loop* sub : l)
    if (!emitted_vector_loops(*sub)) return false;
  return true;
}

// A loop nest to outline: its blocks, and whether it is agc's own vector code, which the
// optimizer then skips as it does the vector loops' pool workers (parallel_loops.cpp): nothing
// for it to vectorize, and in LSTM's second module 6 of its 8 ms (docs/jit.md, "Compile times").
struct Nest {
  std::vector<llvm::BasicBlock*> blocks;
  bool emitted_vectors = false;
};

// Whether `l` is a staged loop (a While of the graph: lower_control.cpp names its blocks
// `while.*`), whose iterations each run whole loop nests, rather than a loop over elements.
bool is_staged_loop(const llvm::Loop& l) { return l.getHeader()->getName().starts_with("while."); }

// The loops of `l` to outline: `l` itself, or when it is a staged loop larger than `max_nest`,
// the loops inside it (by the same rule). A small one stays: its call would cost more than it
// saves the compile. A loop over elements moves whole however large: moving its inner loop
// instead made a call of every row (a 254-row stencil: 254 calls a step, 8% of its time).
void collect_nests(const llvm::Loop& l, size_t max_nest, std::vector<Nest>& nests) {
  size_t size = 0;
  for (const llvm::BasicBlock* bb : l.getBlocks()) size += bb->size();
  if (size < kMinNestInstructions) return;
  if (size > max_nest && is_staged_loop(l) && !l.getSubLoops().empty()) {
    for (const llvm::Loop* sub : l) collect_nests(*sub, max_nest, nests);
    return;
  }
  nests.push_back({{l.getBlocks().begin(), l.getBlocks().end()}, emitted_vector_loops(l)});
}

// Moves loop nests of `entry` into functions of their own (noinline, so they can go to the
// second module): its top-level loops, or the loops inside a large one. Returns how many moved.
int outline_loop_nests(llvm::Function& entry) {
  std::vector<Nest> nests;
  {
    llvm::DominatorTree dt(entry);
    llvm::LoopInfo loops(dt);
    // A staged loop holding most of the entry (an LSTM's time steps) would move whole, leaving
    // the calling thread nothing: its inner nests move instead.
    const size_t max_nest = std::min(kMaxNestInstructions, instructions(entry) / 2);
    for (const llvm::Loop* l : loops) collect_nests(*l, max_nest, nests);
  }
  int moved = 0;
  for (const Nest& nest : nests) {
    llvm::Function* fn = outline(entry, nest.blocks, "nest" + std::to_string(moved));
    if (!fn) continue;
    if (nest.emitted_vectors) mark_emitted_optimized(*fn);
    ++moved;
  }
  return moved;
}

// Makes `f` return from one block, and returns it: the emitter returns from each error check
// (`ret i32 1`), and SimplifyCFG would merge them the same way later.
llvm::BasicBlock* unify_returns(llvm::Function& f) {
  std::vector<llvm::ReturnInst*> rets;
  for (llvm::BasicBlock& bb : f)
    if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(bb.getTerminator())) rets.push_back(ret);
  if (rets.size() == 1) return rets[0]->getParent();
  if (rets.empty() || f.getReturnType()->isVoidTy()) return nullptr;
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(f.getContext(), "common.ret", &f);
  llvm::PHINode* value = llvm::PHINode::Create(f.getReturnType(), static_cast<unsigned>(rets.size()), "ret", exit);
  llvm::ReturnInst::Create(f.getContext(), value, exit);
  for (llvm::ReturnInst* ret : rets) {
    value->addIncoming(ret->getReturnValue(), ret->getParent());
    llvm::BranchInst::Create(exit, ret->getParent());
    ret->eraseFromParent();
  }
  return exit;
}

// Moves the rest of `entry` from one of its blocks on into a function of its own, of about
// `target` instructions: the blocks some block outside every loop (so nothing jumps back into
// it) dominates, but the one that returns, whose size comes closest. The moved code branches to
// the return as an exit: the function returns which way it left, and the entry branches on
// that. Returns it, or null when no block gives at least half the target (and
// kMinSecondPartInstructions).
llvm::Function* outline_entry_tail(llvm::Function& entry, size_t target) {
  llvm::BasicBlock* exit = unify_returns(entry);
  if (!exit) return nullptr;
  llvm::DominatorTree dt(entry);
  const llvm::LoopInfo loops(dt);
  llvm::DenseMap<const llvm::BasicBlock*, size_t> size;  // of the blocks each block dominates
  for (const llvm::DomTreeNode* node : llvm::post_order(dt.getRootNode())) {
    const llvm::BasicBlock* bb = node->getBlock();
    size_t n = bb == exit ? 0 : bb->size();
    for (const llvm::DomTreeNode* child : node->children()) n += size[child->getBlock()];
    size[bb] = n;
  }
  llvm::BasicBlock* best = nullptr;
  size_t best_gap = target / 2 + 1;
  for (llvm::BasicBlock& bb : entry) {
    if (&bb == &entry.getEntryBlock() || &bb == exit || loops.getLoopFor(&bb)) continue;
    const size_t n = size[&bb], gap = n > target ? n - target : target - n;
    if (n < kMinSecondPartInstructions) continue;  // would not pay for a second module
    if (gap < best_gap) {
      best = &bb;
      best_gap = gap;
    }
  }
  if (!best) return nullptr;
  std::vector<llvm::BasicBlock*> blocks;  // `best` first, as CodeExtractor wants its region's entry
  for (const llvm::DomTreeNode* node : llvm::depth_first(dt.getNode(best)))
    if (node->getBlock() != exit) blocks.push_back(node->getBlock());
  return outline(entry, blocks, "tail");
}

// What a function costs to optimize and compile, in instructions' worth: its instructions, and
// the passes' own work on any function (kFunctionCost).
size_t cost(const llvm::Function& f) { return instructions(f) + kFunctionCost; }

constexpr char kBundleMagic[8] = {'A', 'G', 'C', 'O', 'B', 'J', 'S', '1'};

}  // namespace

std::vector<std::string> second_part_functions(llvm::Module& m) {
  llvm::Function* entry = m.getFunction(kEntrySymbol);
  const bool large_entry = entry && instructions(*entry) >= kOutlineNestsAbove;
  if (large_entry) outline_loop_nests(*entry);
  // The kernels, costliest first, each to the lighter side; the entry function and everything it
  // inlines stay on the calling thread.
  std::vector<std::pair<size_t, const llvm::Function*>> kernels;
  size_t first = 0;
  for (const llvm::Function& f : m) {
    if (f.isDeclaration()) continue;
    if (f.getName() != kEntrySymbol && f.hasFnAttribute(llvm::Attribute::NoInline))
      kernels.emplace_back(cost(f), &f);
    else
      first += cost(f);
  }
  std::stable_sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> second;
  size_t second_cost = 0;
  auto weighed_first = [&] { return first * kCallingSideWeight / 100; };
  for (const auto& [c, f] : kernels) {
    if (second_cost <= weighed_first()) {
      second.push_back(f->getName().str());
      second_cost += c;
    } else {
      first += c;
    }
  }
  // Still lopsided (an MLP's train step: forty small loop nests, each too small to move alone):
  // the rest of the entry from some point on moves too, as one function, to even the sides: t
  // instructions moved leave weighed (first - t) against second + t.
  if (large_entry && weighed_first() > second_cost + 3 * kFunctionCost)
    if (const llvm::Function* tail =
            outline_entry_tail(*entry, (weighed_first() - second_cost) * 100 / (100 + kCallingSideWeight))) {
      second.push_back(tail->getName().str());
      second_cost += cost(*tail);
    }
  if (second_cost < kMinSecondPartInstructions + kFunctionCost * second.size()) second.clear();
  return second;
}

std::string split_off(llvm::Module& m, const std::vector<std::string>& names) {
  std::set<const llvm::Function*> part;
  for (const std::string& n : names) part.insert(m.getFunction(n));
  // Whatever one part uses of the other is reached by name across the two objects.
  for (llvm::Function& f : m) {
    if (f.isDeclaration() || !f.hasLocalLinkage()) continue;
    if (used_across(f, part, part.count(&f) > 0)) {
      f.setLinkage(llvm::GlobalValue::ExternalLinkage);
      f.setVisibility(llvm::GlobalValue::DefaultVisibility);
      f.setDSOLocal(false);  // in another object: the linker decides how a call reaches it
    }
  }
  std::string bitcode;
  {
    llvm::raw_string_ostream os(bitcode);
    llvm::WriteBitcodeToFile(m, os);
  }
  for (const std::string& n : names) m.getFunction(n)->deleteBody();
  return bitcode;
}

std::unique_ptr<llvm::Module> second_part(llvm::LLVMContext& ctx, std::string_view bitcode,
                                          const std::vector<std::string>& names) {
  const llvm::MemoryBufferRef buffer(llvm::StringRef(bitcode.data(), bitcode.size()), "agc.second_part");
  llvm::Expected<std::unique_ptr<llvm::Module>> m = llvm::parseBitcodeFile(buffer, ctx);
  if (!m) {
    std::string why;
    llvm::raw_string_ostream os(why);
    os << m.takeError();
    throw InternalError("jit: reading the second part of a split module: " + why);
  }
  const std::set<std::string> keep(names.begin(), names.end());
  for (llvm::Function& f : **m)
    if (!f.isDeclaration() && !keep.count(f.getName().str())) f.deleteBody();
  (*m)->setModuleIdentifier((*m)->getModuleIdentifier() + ".kernels");
  return std::move(*m);
}

std::string bundle_objects(const std::vector<std::string>& objects) {
  if (objects.size() == 1) return objects[0];
  std::string out(kBundleMagic, sizeof kBundleMagic);
  for (const std::string& o : objects) {
    const uint64_t size = o.size();
    out.append(reinterpret_cast<const char*>(&size), sizeof size);
    out += o;
  }
  return out;
}

std::vector<std::string_view> unbundle_objects(std::string_view entry) {
  if (entry.size() < sizeof kBundleMagic || std::memcmp(entry.data(), kBundleMagic, sizeof kBundleMagic) != 0)
    return {entry};
  std::vector<std::string_view> out;
  entry.remove_prefix(sizeof kBundleMagic);
  while (!entry.empty()) {
    uint64_t size = 0;
    if (entry.size() < sizeof size) return {};
    std::memcpy(&size, entry.data(), sizeof size);
    entry.remove_prefix(sizeof size);
    if (size == 0 || size > entry.size()) return {};
    out.push_back(entry.substr(0, size));
    entry.remove_prefix(size);
  }
  return out;
}

}  // namespace ag::jit
