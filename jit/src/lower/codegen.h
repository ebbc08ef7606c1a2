// The codegen context every lowering shares: the builder and the function being emitted,
// types and constants, counted loops and branches, error exits, memory, runtime calls, and the
// loop nests the thread pool may split (parallel_loops.cpp). It knows nothing of graphs or ops:
// Emitter (emitter.h) lowers scopes and op families on top of it. Includes LLVM: only for
// jit/src/lower and the engine.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <unordered_set>
#include <vector>

#include "../abi.h"
#include "../rt_helper_types.h"
#include "../plan.h"

namespace ag::jit {

// The value a buffer is allocated for, named by the error when memory runs out.
struct AllocSite {
  int32_t node = -1;                              // global node id
  uint32_t output = 0;
  const std::vector<llvm::Value*>* dims = nullptr;  // its dims (null: the static shape)
  int64_t block_bytes = 0;                        // > 0: the arena, of which it is the largest value
};

class Codegen {
 public:
  // node_lines: an inspection build, whose instructions carry their node (node_lines.h).
  Codegen(llvm::Module& module, const Program& program, int vector_bytes, bool node_lines);

  llvm::IRBuilder<>& b() { return b_; }
  llvm::LLVMContext& context() { return ctx_ref_; }
  const Program& program() const { return prog_; }
  llvm::Value* ctx() const { return ctx_; }
  int vector_width() const { return vector_bytes_; }  // bytes of the target's widest vector register
  // node_lines: the instructions emitted from now on come from top-level node `node` (-1: none).
  void at_node(int64_t node);

  // ---- types and constants (codegen.cpp) ----
  llvm::Type* mem_type(DType d) const;  // in memory (bool = i8)
  llvm::Type* reg_type(DType d) const;  // in a register (bool = i1)
  llvm::Value* i64(int64_t v) { return b_.getInt64(v); }
  llvm::Value* i32(int32_t v) { return b_.getInt32(v); }
  llvm::Value* constant(DType d, double f, int64_t i);  // f for floats, i otherwise
  std::vector<llvm::Value*> static_dims(const Shape& s);
  llvm::Value* numel(const std::vector<llvm::Value*>& dims);
  llvm::Value* byte_size(DType d, const std::vector<llvm::Value*>& dims);
  bool is_const(llvm::Value* v, int64_t c) const;
  // sum of idx[j] * strides[j]
  llvm::Value* linear_offset(const std::vector<llvm::Value*>& strides, const std::vector<llvm::Value*>& idx);
  // Row-major strides (in elements) of a buffer with these dims.
  std::vector<llvm::Value*> contiguous_strides(const std::vector<llvm::Value*>& dims);

  // ---- control flow (codegen_control.cpp) ----
  void loop(llvm::Value* n, const std::function<void(llvm::Value*)>& body);
  void loop_nest(const std::vector<llvm::Value*>& dims, const std::function<void(const std::vector<llvm::Value*>&)>& body);
  // The back edge of an emitted counted loop: `continue_loop ? head : exit`, marked so that LLVM
  // does not runtime-unroll it (nor the scalar remainder the vectorizer leaves behind).
  // rolled: LLVM may not unroll the loop (an outer loop of a program with rolled loops, whose
  // body emitted a latch after `latches_before`; a matmul chain). full: unrolled whole (a short
  // innermost loop of constant count; the only unrolling LLVM does: optimizer.cpp).
  void loop_latch(llvm::Value* continue_loop, llvm::BasicBlock* head, llvm::BasicBlock* exit, bool rolled, bool full = false);
  // The number of loops emitted so far, and whether an outer loop around those emitted since
  // `latches_before` stays rolled.
  uint64_t latches() const { return latches_; }
  bool keep_rolled(uint64_t latches_before) const { return prog_.rolled_loops && latches_ != latches_before; }
  // acc = init; for i in [0, n): acc = step(acc, i); returns acc (a register, not memory).
  llvm::Value* loop_reduce(llvm::Value* n, llvm::Value* init,
                           const std::function<llvm::Value*(llvm::Value* acc, llvm::Value* i)>& step);
  // The same with several values carried in registers (an arg-reduction's best value and index;
  // none for loop()). Blocks `name` and `name.end`; rolled: LLVM may not unroll it.
  std::vector<llvm::Value*> loop_carry(
      llvm::Value* n, const std::vector<llvm::Value*>& init,
      const std::function<std::vector<llvm::Value*>(const std::vector<llvm::Value*>& acc, llvm::Value* i)>& step,
      const char* name = "red", bool rolled = false);
  void if_then(llvm::Value* cond, const std::function<void()>& then);
  void if_else(llvm::Value* cond, const std::function<void()>& then, const std::function<void()>& otherwise);
  // Raises `kind` for node `node_id` when `cond` holds: the function returns 1.
  void fail_if(llvm::Value* cond, int32_t node_id, FailKind kind, llvm::Value* a = nullptr, llvm::Value* b = nullptr);
  // Returns 1 when `cond` holds (the runtime has already recorded the error).
  void return_if(llvm::Value* cond);
  // What both emit: a cold block `name` that runs `before` and returns 1 when `cond` holds.
  void exit_if(llvm::Value* cond, const char* name, const std::function<void()>& before);

  // ---- loop nests the thread pool may split (parallel_loops.cpp) ----
  // Large or dynamic elementwise loops whose only writes are to `outs` (any other write, or an
  // error exit, keeps the loop serial). Outlined by outline_parallel_loops() once the entry is
  // done. inner_work: the elements one index of the nest handles (a row reduction's row length;
  // 1 when null), which sets the size threshold and the pool's grain.
  // rows: each index reduces rows of elements it only reads (row reductions, products in vector
  // registers, arg-reductions), which split from a larger size than loops that store each
  // element (kReductionGrain, parallel_loops.cpp).
  // loops: each index runs a loop of its own (a While run element by element), which splits
  // from far fewer indices (kLoopsGrain).
  enum class LoopWork : uint8_t { Elementwise, ReducedRows, Loops };
  // `outs`: the buffers the loop writes (one for all but a While run element by element).
  void parallel_loop_nest(const std::vector<llvm::Value*>& dims, const std::vector<llvm::Value*>& outs,
                          const std::function<void(const std::vector<llvm::Value*>&)>& body,
                          llvm::Value* inner_work = nullptr, LoopWork work = LoopWork::Elementwise);
  // The loop nest in the form outline_parallel_loop() moves out (its range in two stack slots).
  // work_per_outer: the elements one outer iteration handles (default: the inner dims' product),
  // which sets the pool's grain.
  void splittable_loop_nest(const std::vector<llvm::Value*>& dims, const std::vector<llvm::Value*>& outs,
                            const std::function<void(const std::vector<llvm::Value*>&)>& body,
                            llvm::Value* work_per_outer = nullptr, int64_t grain = 0);  // 0: the elementwise grain
  void outline_parallel_loops();
  // The fence that orders non-temporal stores before the thread that made them reports its range
  // done; a loop emitted while `streaming_stores` is set ends with it.
  void store_fence();

  // ---- memory (codegen.cpp) ----
  llvm::Value* load(DType d, llvm::Value* ptr, llvm::Value* index);  // a register value
  void store(DType d, llvm::Value* ptr, llvm::Value* index, llvm::Value* v);
  llvm::Value* stack_alloc(int64_t bytes);  // in the entry block, 64-byte aligned
  // A buffer owned by the code; on failure the call returns with an error naming `site`.
  llvm::Value* owned_alloc(llvm::Value* bytes, const AllocSite& site);
  // Returns 1 when `p` is null, after recording the out-of-memory error of `site`.
  void return_if_out_of_memory(llvm::Value* p, const AllocSite& site);
  void owned_free(llvm::Value* ptr);
  void copy_bytes(llvm::Value* dst, llvm::Value* src, llvm::Value* bytes);

  // ---- runtime (codegen.cpp) ----
  // The declaration of a runtime helper, typed from its row in rt_helpers.def.
  llvm::FunctionCallee runtime(const char* name);
  llvm::Type* rt_type(RtType t);
  llvm::Value* ctx_field(CtxField f);

 protected:
  llvm::LLVMContext& ctx_ref_;
  llvm::Module& module_;
  const Program& prog_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* entry_ = nullptr;  // allocas go here
  const int vector_bytes_;  // the target's widest vector register (build_module.h)
  const bool node_lines_;
  llvm::DISubprogram* node_scope_ = nullptr;  // node_lines: the scope of node locations
  llvm::Value* args_ = nullptr;
  llvm::Value* ctx_ = nullptr;
  // State the loops emitted now depend on, set by the lowering that emits them:
  bool emitting_vectors_ = false;  // agc's own vector code: loop_latch marks it not to vectorize again
  bool streaming_stores_ = false;  // splittable_loop_nest: the loop emitted now ends with store_fence()

 private:
  uint64_t latches_ = 0;  // loops emitted so far

  // A loop nest emitted inline, to be moved into a worker function the pool calls per range of
  // its outer index: its blocks [entry, exit), the stack slots its range is read from, its outer
  // trip count, the elements per outer iteration, and the buffers it may write.
  struct ParallelLoop {
    llvm::BasicBlock* entry = nullptr;
    llvm::BasicBlock* exit = nullptr;
    llvm::Value* lo_slot = nullptr;
    llvm::Value* hi_slot = nullptr;
    llvm::Value* outer = nullptr;
    llvm::Value* inner_elements = nullptr;
    std::vector<llvm::Value*> outs;
    bool emitted_vectors = false;  // agc's own vector code: the optimizer skips it (optimizer.h)
    int64_t unit = 1;              // chunks begin at multiples of this many outer iterations
    int64_t grain = 0;             // elements per chunk, at least (0: kParallelGrain)
  };
  std::vector<ParallelLoop> parallel_loops_;
  bool outline_parallel_loop(const ParallelLoop& loop, int index);
};

}  // namespace ag::jit
