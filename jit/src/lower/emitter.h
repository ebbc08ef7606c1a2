// The IR emitter shared by the lowering files: one LLVM function per concrete function, values
// as registers or (pointer, dims) buffers, loops, runtime calls and error exits. Each op family
// is lowered in its own lower_*.cpp. Includes LLVM: only for jit/src/lower and the engine.
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <optional>
#include <unordered_set>
#include <vector>

#include "../abi.h"
#include "../rt_helper_types.h"
#include "../plan.h"

namespace ag::jit {

// A value during lowering.
struct LVal {
  enum class Kind : uint8_t { None, Reg, Buf, Fused, Slot } kind = Kind::None;
  DType dtype = DType::Float32;
  llvm::Value* reg = nullptr;          // Reg: the element (i1 for bool); a fused draw: its stream key
  llvm::Value* counter = nullptr;      // a fused draw (RandomUniform): the counter of its first word
  llvm::Value* ptr = nullptr;          // Buf: the row-major data
  std::vector<llvm::Value*> dims;      // i64 per dim, constants where static (Reg, Buf, Fused)
  int32_t slot = -1;                   // Slot: a TensorArray handle held by the runtime
};

// Where a scope delivers result k (If outputs, function outputs).
struct Sink {
  enum class Kind : uint8_t { None, Static, Output, Owned } kind = Kind::None;
  llvm::Value* ptr = nullptr;  // Static: a buffer of the result's (static) size
  int32_t index = 0;           // Output: the function result index
};

// The value a buffer is allocated for, named by the error when memory runs out.
struct AllocSite {
  int32_t node = -1;                              // global node id
  uint32_t output = 0;
  const std::vector<llvm::Value*>* dims = nullptr;  // its dims (null: the static shape)
  int64_t block_bytes = 0;                        // > 0: the arena, of which it is the largest value
};

// One graph scope being lowered (the function body, a branch, a loop condition or body).
struct Scope {
  const ScopePlan* plan = nullptr;
  std::vector<std::vector<LVal>> values;  // [node][output]
  llvm::Value* arena = nullptr;           // base of this scope's static arena
  std::vector<Sink> sinks;                // per result

  const Graph& graph() const { return *plan->graph; }
  const LVal& at(ValueId v) const { return values[v.node][v.index]; }
  const TensorType& type(ValueId v) const { return plan->graph->type(v); }
  int32_t node_id(uint32_t i) const { return plan->node_id(i); }
  // Value `v` of this scope, for out-of-memory errors.
  AllocSite site(ValueId v, const std::vector<llvm::Value*>& dims) const { return {node_id(v.node), v.index, &dims}; }
};

// An iteration space: dims (outer to inner) and, per buffer read in it, its element stride per
// dim (0 where the buffer broadcasts). Built by Emitter::make_walk.
struct Walk {
  std::vector<llvm::Value*> dims;
  std::vector<std::pair<const LVal*, std::vector<llvm::Value*>>> strides;
  const std::vector<llvm::Value*>* find(const LVal* v) const {
    for (const auto& [leaf, s] : strides)
      if (leaf == v) return &s;
    return nullptr;
  }
};

class Emitter {
 public:
  // node_lines: an inspection build, whose instructions carry their node (node_lines.h).
  Emitter(llvm::Module& module, const Program& program, int vector_bytes, bool node_lines = false);

  // Emits `agc_entry(const JitArg* args, JitCallCtx* ctx) -> i32`.
  void emit_entry();

  // ---- types and constants (emitter.cpp) ----
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

  // ---- control flow ----
  void loop(llvm::Value* n, const std::function<void(llvm::Value*)>& body);
  void loop_nest(const std::vector<llvm::Value*>& dims, const std::function<void(const std::vector<llvm::Value*>&)>& body);
  // The back edge of an emitted counted loop: `continue_loop ? head : exit`, marked so that LLVM
  // does not runtime-unroll it (nor the scalar remainder the vectorizer leaves behind).
  // rolled: LLVM may not unroll the loop (an outer loop of a program with rolled loops, whose
  // body emitted a latch after `latches_before`; a matmul chain).
  void loop_latch(llvm::Value* continue_loop, llvm::BasicBlock* head, llvm::BasicBlock* exit, bool rolled);
  bool keep_rolled(uint64_t latches_before) const { return prog_.rolled_loops && latches_ != latches_before; }
  uint64_t latches_ = 0;  // loops emitted so far
  // acc = init; for i in [0, n): acc = step(acc, i); returns acc (a register, not memory).
  llvm::Value* loop_reduce(llvm::Value* n, llvm::Value* init,
                           const std::function<llvm::Value*(llvm::Value* acc, llvm::Value* i)>& step);
  // The same with several values carried in registers (an arg-reduction's best value and index;
  // none for loop()). Blocks `name` and `name.end`; rolled: LLVM may not unroll it.
  std::vector<llvm::Value*> loop_carry(
      llvm::Value* n, const std::vector<llvm::Value*>& init,
      const std::function<std::vector<llvm::Value*>(const std::vector<llvm::Value*>& acc, llvm::Value* i)>& step,
      const char* name = "red", bool rolled = false);
  // A loop nest whose outermost loop the thread pool may split (parallel_loops.cpp): large or
  // dynamic elementwise loops whose only writes are to `out` (any other write, or an error
  // exit, keeps the loop serial). Outlined by outline_parallel_loops() once the entry is done.
  // inner_work: the elements one index of the nest handles (a row reduction's row length; 1
  // when null), which sets the size threshold and the pool's grain.
  void parallel_loop_nest(const std::vector<llvm::Value*>& dims, llvm::Value* out,
                          const std::function<void(const std::vector<llvm::Value*>&)>& body,
                          llvm::Value* inner_work = nullptr);
  void outline_parallel_loops();
  void if_then(llvm::Value* cond, const std::function<void()>& then);
  void if_else(llvm::Value* cond, const std::function<void()>& then, const std::function<void()>& otherwise);
  // Raises `kind` for node `node_id` when `cond` holds: the function returns 1.
  void fail_if(llvm::Value* cond, int32_t node_id, FailKind kind, llvm::Value* a = nullptr, llvm::Value* b = nullptr);
  // Returns 1 when `cond` holds (the runtime has already recorded the error).
  void return_if(llvm::Value* cond);
  // What both emit: a cold block `name` that runs `before` and returns 1 when `cond` holds.
  void exit_if(llvm::Value* cond, const char* name, const std::function<void()>& before);

  // ---- memory ----
  llvm::Value* load(DType d, llvm::Value* ptr, llvm::Value* index);  // a register value
  void store(DType d, llvm::Value* ptr, llvm::Value* index, llvm::Value* v);
  llvm::Value* stack_alloc(int64_t bytes);  // in the entry block, 64-byte aligned
  // A buffer owned by the code; on failure the call returns with an error naming `site`.
  llvm::Value* owned_alloc(llvm::Value* bytes, const AllocSite& site);
  // Returns 1 when `p` is null, after recording the out-of-memory error of `site`.
  void return_if_out_of_memory(llvm::Value* p, const AllocSite& site);
  void owned_free(llvm::Value* ptr);
  void copy_bytes(llvm::Value* dst, llvm::Value* src, llvm::Value* bytes);
  // The value as a buffer (a register is stored to the stack).
  LVal as_buffer(const LVal& v);
  // A value of static type `t` described by a data pointer and a pointer to its dims (a JitArg):
  // static dims become constants, one-element values registers.
  LVal described_value(const TensorType& t, llvm::Value* data, llvm::Value* dims_ptr);
  // The dims of type t: its static dims, the others loaded from dims_ptr.
  std::vector<llvm::Value*> described_dims(const TensorType& t, llvm::Value* dims_ptr);
  // Element 0 of a one-element value as a register.
  llvm::Value* as_register(const LVal& v);
  // A fresh buffer for value `v` of node `i` in `s` following the plan (arena, owned, sink).
  llvm::Value* allocate_value(Scope& s, ValueId v, const std::vector<llvm::Value*>& dims);
  // The buffer node i computes its result into: its planned buffer, or a stack slot when the
  // result is a register (read back by finish_result).
  llvm::Value* result_buffer(Scope& s, uint32_t i, const std::vector<llvm::Value*>& dims);
  // Records node i's result computed into `ptr`: a register (loaded) or the buffer itself.
  void finish_result(Scope& s, uint32_t i, LVal out, llvm::Value* ptr);
  // Allocates function result `index` (a run-time shape) through agc_rt_output.
  llvm::Value* output_buffer(int32_t index, const std::vector<llvm::Value*>& dims, const AllocSite& site);
  // Writes `v` into a buffer `dst` of the same number of elements.
  void copy_value(const LVal& v, llvm::Value* dst);

  // ---- runtime ----
  // The declaration of a runtime helper, typed from its row in rt_helpers.def.
  llvm::FunctionCallee runtime(const char* name);
  llvm::Type* rt_type(RtType t);
  llvm::Value* ctx_field(CtxField f);
  llvm::Value* ctx() const { return ctx_; }

  // ---- scopes (lower_scope.cpp) ----
  // Binds params, lowers every node; results are then read with scope.at(results[k]).
  void lower_nodes(Scope& s, const std::vector<LVal>& params);
  // Delivers result k to its sink (unless it was computed in place) and returns it.
  LVal deliver_result(Scope& s, size_t k);
  // Frees the owned buffers alive until the results (after the caller used them).
  void release_scope(Scope& s);
  // node_lines: the instructions emitted from now on come from top-level node `node` (-1: none).
  void at_node(int64_t node);

  // ---- op families (one lower_*.cpp each) ----
  void lower_node(Scope& s, uint32_t i);
  std::vector<llvm::Value*> broadcast_dims(Scope& s, uint32_t i);                  // lower_shapes.cpp
  std::vector<llvm::Value*> broadcast_lists(const std::vector<const std::vector<llvm::Value*>*>& inputs,
                                            const Shape& out, int32_t node_id);
  llvm::Value* scalar_op(const Node& n, int32_t node_id, DType in, const std::vector<llvm::Value*>& args);  // lower_scalar.cpp
  llvm::Value* math_call(OpKind op, DType d, llvm::Value* x);                      // lower_math.cpp
  llvm::Value* tanh_f32(llvm::Value* x);
  llvm::Value* libm_call(const char* name, llvm::Value* x);
  llvm::Value* stream_mix(llvm::Value* x);                                           // lower_random.cpp
  llvm::Value* uniform_element(const Node& n, const LVal& draw, llvm::Value* k);
  Walk make_walk(const std::vector<llvm::Value*>& dims, const std::vector<const LVal*>& leaves, bool collapse);  // lower_fused.cpp
  void collect_leaves(Scope& s, ValueId v, std::vector<const LVal*>& out);
  llvm::Value* eval_element(Scope& s, ValueId v, const Walk& w, const std::vector<llvm::Value*>& idx);
  void lower_elementwise(Scope& s, uint32_t i);
  // lower_fused_vector.cpp: node i's loop emitted as vector code (a float walk whose inner dim
  // every operand reads contiguously or broadcasts, of supported ops); false when it does not
  // apply and the scalar loop (for LLVM's vectorizer) is needed.
  bool lower_elementwise_vector(Scope& s, uint32_t i, const LVal& out, const Walk& w);
  bool vectorizable(Scope& s, ValueId v, DType loop_dtype) const;
  // The lanes of `v` at index `outer` of the walk's outer dims and [base, base + lanes) of its
  // inner dim; `mask`: the lanes in range (null: all).
  // `loaded`: the block's loads so far, by buffer (a buffer read twice is loaded once).
  llvm::Value* eval_vector(Scope& s, ValueId v, const Walk& w, const std::vector<llvm::Value*>& outer, llvm::Value* base,
                           unsigned lanes, llvm::Value* mask, std::vector<std::pair<const LVal*, llvm::Value*>>& loaded);
  bool emitting_vectors_ = false;  // loop_latch: the loops emitted now must not be vectorized again
  // Non-temporal stores (lower_fused_vector.cpp): whether a vector loop writes `out` around the
  // cache (a result far larger than the last-level cache, in aligned whole blocks), and the
  // fence that orders such stores before the thread that made them reports its range done.
  bool streaming_output(const LVal& out, const Walk& w, DType d, unsigned lanes) const;
  void store_fence();
  bool streaming_stores_ = false;  // splittable_loop_nest: the loop emitted now ends with store_fence()
  std::unordered_set<const llvm::Value*> aligned_results_;  // the entry's static results: 64-byte-aligned buffers
  void lower_reduce(Scope& s, uint32_t i);                                         // lower_reduce.cpp
  void lower_arg_reduce(Scope& s, uint32_t i);
  // A small product with its rows' column segments packed into whole vectors
  // (lower_matmul_packed.cpp): the layout, or nothing where the row kernel does as well.
  struct GemmPacking {
    struct Segment {
      int64_t j0 = 0, width = 0;  // columns j0 .. j0 + width of C
      int64_t rows_per_vector = 1, vectors = 0;
      int64_t offset = -1;        // its first vector in the packed A, -1: not packed (A splat)
    };
    std::vector<Segment> segments;
    int64_t lanes = 0, vector_bytes = 0;
    int64_t vectors = 0;         // of C
    int64_t packed_vectors = 0;  // of the packed A
  };
  void lower_matmul(Scope& s, uint32_t i);                                         // lower_matmul.cpp
  // A chain r = matmul(x, r) of one small kernel from node i: its length (0: none), and its
  // emission as a loop (lower_matmul.cpp).
  int64_t matmul_chain_length(const Scope& s, uint32_t i) const;
  void lower_matmul_chain(Scope& s, uint32_t i, int64_t length);
  llvm::Function* matmul_kernel(const std::string& name, unsigned pointers);
  llvm::Function* small_gemm(DType d, int64_t m, int64_t k, int64_t n);
  std::optional<GemmPacking> gemm_packing(DType d, int64_t m, int64_t k, int64_t n) const;
  llvm::Value* pack_gemm_lhs(const GemmPacking& p, DType d, int64_t m, int64_t k, llvm::Value* a);
  llvm::Function* small_gemm_packed(const GemmPacking& p, DType d, int64_t m, int64_t k, int64_t n);
  void lower_layout(Scope& s, uint32_t i);                                         // lower_layout.cpp
  void finish_view(Scope& s, uint32_t i, const LVal& in, std::vector<llvm::Value*> dims);
  void lower_transpose(Scope& s, uint32_t i);
  void lower_concat(Scope& s, uint32_t i);
  void lower_slice(Scope& s, uint32_t i);
  void lower_gather(Scope& s, uint32_t i);
  void lower_source(Scope& s, uint32_t i);                                         // lower_source.cpp
  void lower_stateful(Scope& s, uint32_t i);                                       // lower_state.cpp
  void lower_list(Scope& s, uint32_t i);
  void fill_arg(llvm::Value* arg, const LVal& v);
  llvm::Value* tensor_arg(const LVal& v);  // a JitArg on the stack
  llvm::Value* input_args(Scope& s, uint32_t i);
  void lower_if(Scope& s, uint32_t i);                                             // lower_control.cpp
  llvm::Value* child_arena(Scope& s, uint32_t i);
  void lower_while(Scope& s, uint32_t i);

  llvm::IRBuilder<>& b() { return b_; }
  llvm::LLVMContext& context() { return ctx_ref_; }
  const Program& program() const { return prog_; }

 private:
  void emit_results(Scope& root);

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

  // A loop nest emitted inline, to be moved into a worker function the pool calls per range of
  // its outer index: its blocks [entry, exit), the stack slots its range is read from, its outer
  // trip count, the elements per outer iteration, and the buffer it may write.
  struct ParallelLoop {
    llvm::BasicBlock* entry = nullptr;
    llvm::BasicBlock* exit = nullptr;
    llvm::Value* lo_slot = nullptr;
    llvm::Value* hi_slot = nullptr;
    llvm::Value* outer = nullptr;
    llvm::Value* inner_elements = nullptr;
    llvm::Value* out = nullptr;
    bool emitted_vectors = false;  // agc's own vector code: the optimizer skips it (optimizer.h)
    int64_t unit = 1;              // chunks begin at multiples of this many outer iterations
  };
  std::vector<ParallelLoop> parallel_loops_;
  bool outline_parallel_loop(const ParallelLoop& loop, int index);
  // The loop nest in the form outline_parallel_loop() moves out (its range in two stack slots).
  // work_per_outer: the elements one outer iteration handles (default: the inner dims' product),
  // which sets the pool's grain.
  void splittable_loop_nest(const std::vector<llvm::Value*>& dims, llvm::Value* out,
                            const std::function<void(const std::vector<llvm::Value*>&)>& body,
                            llvm::Value* work_per_outer = nullptr);
  // lower_reduce.cpp: node i's reduction, when it is a full reduction of a large contiguous
  // operand, in fixed chunks over the pool.
  // `serial` emits the caller's walk, for sizes known only at run time that turn out small.
  using Combine = std::function<llvm::Value*(llvm::Value*, llvm::Value*)>;
  bool parallel_full_reduce(Scope& s, uint32_t i, ValueId x, const Walk& w, llvm::Value* acc, DType d, llvm::Value* init,
                            const Combine& combine, const std::function<void()>& serial);
  void reduce_partials(Scope& s, uint32_t i, llvm::Value* count, llvm::Value* work, llvm::Value* acc, DType d,
                       llvm::Value* init, const Combine& combine, const std::function<llvm::Value*(llvm::Value*)>& partial);
  bool parallel_full_reduce_by_rows(Scope& s, uint32_t i, ValueId x, const Walk& w, llvm::Value* acc, DType d,
                                    llvm::Value* init, const Combine& combine, const std::function<void()>& serial);
  // ... and a column reduction of a large 2-D walk, in fixed blocks of rows (node i's reduction).
  bool parallel_column_reduce(Scope& s, uint32_t i, ValueId x, const Walk& w, const LVal& acc_view, DType d,
                              llvm::Value* init, const Combine& combine, const std::function<void()>& serial);
  // A reduction's row form (rolled loops): the walk's first `kept` dims kept, the others reduced
  // into a register per output element; `op` picks ordered integer keys for a float max or min.
  void reduce_rows(Scope& s, ValueId x, const Walk& w, llvm::Value* acc, const std::vector<llvm::Value*>& acc_strides,
                   size_t kept, DType d, OpKind op, bool rows_independent, const Combine& combine);
};

}  // namespace ag::jit
