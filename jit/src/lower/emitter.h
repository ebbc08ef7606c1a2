// The IR emitter: one LLVM function per concrete function, on the codegen context (codegen.h).
// It lowers scopes (values as registers or (pointer, dims) buffers, results to their sinks) and
// dispatches each node to its op family's lowering, one lower_*.cpp each. Includes LLVM: only
// for jit/src/lower and the engine.
#pragma once

#include <functional>
#include <optional>
#include <unordered_set>
#include <vector>

#include "codegen.h"

namespace ag::jit {

// A value during lowering.
struct LVal {
  enum class Kind : uint8_t { None, Reg, Buf, Fused, Slot } kind = Kind::None;
  DType dtype = DType::Float32;
  llvm::Value* reg = nullptr;          // Reg: the element (i1 for bool); a fused draw: its stream key
  llvm::Value* counter = nullptr;      // a fused draw (RandomUniform): the counter of its first word
  llvm::Value* ptr = nullptr;          // Buf: the row-major data
  std::vector<llvm::Value*> dims;      // i64 per dim, constants where static (Reg, Buf, Fused)
  // Buf: element strides per dim when the data is another buffer's box (a slice read in place
  // by elementwise loops: plan.cpp, view_slices); empty = row-major in `dims`.
  std::vector<llvm::Value*> strides;
  int32_t slot = -1;                   // Slot: a TensorArray handle held by the runtime
  // Fused: a reduction over a few elements evaluated inline where it is read (fusion.h,
  // kMaxInlineReduction): a leaf of its consumer's walk, which never collapses dims around it.
  bool inline_reduction = false;
};

// Where a scope delivers result k (If outputs, function outputs).
struct Sink {
  enum class Kind : uint8_t { None, Static, Output, Owned } kind = Kind::None;
  llvm::Value* ptr = nullptr;  // Static: a buffer of the result's (static) size
  int32_t index = 0;           // Output: the function result index
  // A loop state's free buffer (lower_control.cpp, Twin): an i1, true from the loop's second
  // iteration on, when the buffer holds the state's elements outside any box that an update of
  // the state itself writes (every iteration's update copied them from the same state).
  llvm::Value* outside_kept = nullptr;
};

// One graph scope being lowered (the function body, a branch, a loop condition or body).
struct Scope {
  const ScopePlan* plan = nullptr;
  std::vector<std::vector<LVal>> values;  // [node][output]
  llvm::Value* arena = nullptr;           // base of this scope's static arena
  std::vector<Sink> sinks;                // per result
  // Result buffers of slice updates whose box was computed before them (node, buffer).
  std::vector<std::pair<uint32_t, llvm::Value*>> update_buffers;
  // Products whose B operand was packed before the loop this scope is the body of (node, the
  // packed panels: null at run time when the GEMM does not pack): lower_control.cpp.
  std::vector<std::pair<uint32_t, llvm::Value*>> packed_b;
  // Segment sums pulled by segment in the loop this scope is the body of (segment_pulls.h):
  // lower_control.cpp orders their edges before the loop, lower_scatter.cpp pulls.
  struct SegmentOrder {
    uint32_t node;                  // the segment sum
    llvm::Value* block;             // agc_rt_segment_order's block (not null: checked before the loop)
    std::vector<uint32_t> gathers;  // its fused gathers' nodes, in the block's order
    bool with_edge = false;         // the block's records hold their edge (SegmentPull::reads_edges)
  };
  std::vector<SegmentOrder> segment_orders;

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

class Emitter : public Codegen {
 public:
  // node_lines: an inspection build, whose instructions carry their node (node_lines.h).
  Emitter(llvm::Module& module, const Program& program, int vector_bytes, bool node_lines = false)
      : Codegen(module, program, vector_bytes, node_lines), vector_math_(has_libmvec(module)) {}

  // Emits `agc_entry(const JitArg* args, JitCallCtx* ctx) -> i32`.
  void emit_entry();

  // ---- values (emitter.cpp) ----
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
  // The result buffer of slice update `i` (allocated at the first request: its box may be
  // computed before it, plan_updates.h).
  llvm::Value* update_buffer(Scope& s, uint32_t i);
  // Points `out` (a Box value) at the box of its update's result buffer, with that buffer's strides.
  void box_destination(Scope& s, uint32_t i, LVal& out);

  // ---- scopes (lower_scope.cpp) ----
  // Binds params, lowers every node; results are then read with scope.at(results[k]).
  void lower_nodes(Scope& s, const std::vector<LVal>& params);
  // Delivers result k to its sink (unless it was computed in place) and returns it.
  LVal deliver_result(Scope& s, size_t k);
  // Frees the owned buffers alive until the results (after the caller used them).
  void release_scope(Scope& s);
  void release_value(Scope& s, ValueId v);

  // ---- op families (one lower_*.cpp each) ----
  void lower_node(Scope& s, uint32_t i);
  std::vector<llvm::Value*> broadcast_dims(Scope& s, uint32_t i);                  // lower_shapes.cpp
  std::vector<llvm::Value*> broadcast_lists(const std::vector<const std::vector<llvm::Value*>*>& inputs,
                                            const Shape& out, int32_t node_id);
  llvm::Value* scalar_op(const Node& n, int32_t node_id, DType in, const std::vector<llvm::Value*>& args);  // lower_scalar.cpp
  llvm::Value* scalar_value(const Node& n, int32_t node_id, DType in, const std::vector<llvm::Value*>& args);  // without the test hook
  // A CheckNumerics node on element `x` (flat element `index` of its value; null: not known):
  // raises when x is NaN or Inf, else gives x (lower_scalar.cpp).
  llvm::Value* check_element(int32_t node_id, llvm::Value* x, llvm::Value* index);
  llvm::Value* not_finite(llvm::Value* x);       // i1 (or a vector of them): x is NaN or Inf
  llvm::Value* non_finite_kind(llvm::Value* x);  // i64 detail::NonFiniteKind of a non-finite scalar
  // The same on a block of lanes (lower_fused_vector.cpp): `first` is the flat element of lane 0,
  // `step` 1 when the lanes are consecutive elements, 0 when they are one broadcast element;
  // lanes off `mask` (the partial block) are not checked.
  llvm::Value* check_vector(int32_t node_id, llvm::Value* x, llvm::Value* first, int64_t step, llvm::Value* mask);
  // A check_vector whose branch waits for the end of its vector block: every check of a block
  // shares one or-reduction and one branch (flush_checks), and the error path finds which.
  struct PendingCheck {
    int32_t node_id;
    llvm::Value* bad;    // <lanes x i1>: the lanes that are not finite
    llvm::Value* x;      // the checked lanes
    llvm::Value* first;  // check_vector's first and step
    int64_t step;
  };
  void flush_checks(const std::vector<PendingCheck>& checks);
  llvm::Value* math_call(OpKind op, DType d, llvm::Value* x);                      // lower_math.cpp
  llvm::Value* tanh_f32(llvm::Value* x);
  // Whether the target has glibc's libmvec (x86-64 Linux): ops.def's `mvec` ops then run in
  // agc's vector loops.
  bool has_vector_math() const { return vector_math_; }
  static bool has_libmvec(const llvm::Module& module);  // the same, of the module's target
  // libm's `name` (double's; float32 adds "f") on each lane of vector x: libmvec's variant of the
  // register's width, a register at a time (a lane at a time through libm where the vector is
  // not whole registers, or the target has no libmvec).
  llvm::Value* vector_math_call(const char* name, DType d, llvm::Value* x);
  // A call of libm's `name` on x (and y: a binary function such as atan2).
  llvm::Value* libm_call(const char* name, llvm::Value* x, llvm::Value* y = nullptr);
  static const char* libm_name(OpKind op);  // the function computing `op` (double), or null
  llvm::Value* stream_mix(llvm::Value* x);                                           // lower_random.cpp
  llvm::Value* uniform_element(const Node& n, const LVal& draw, llvm::Value* k);
  Walk make_walk(const std::vector<llvm::Value*>& dims, const std::vector<const LVal*>& leaves, bool collapse);  // lower_fused.cpp
  void collect_leaves(Scope& s, ValueId v, std::vector<const LVal*>& out);
  llvm::Value* eval_element(Scope& s, ValueId v, const Walk& w, const std::vector<llvm::Value*>& idx);
  void lower_elementwise(Scope& s, uint32_t i);
  // assign_add/assign_sub node i, updating in place (fusion.h, updates_in_place): `dst` the
  // variable's buffer (locked by the caller), each element combined with the fused operand's.
  void update_in_place(Scope& s, uint32_t i, llvm::Value* dst);
  // lower_fused_vector.cpp: node i's loop emitted as vector code (a float walk whose inner dim
  // every operand reads contiguously or broadcasts, of supported ops); false when it does not
  // apply and the scalar loop (for LLVM's vectorizer) is needed.
  bool lower_elementwise_vector(Scope& s, uint32_t i, const LVal& out, const Walk& w);
  bool vectorizable(Scope& s, ValueId v, DType loop_dtype) const;
  // Whether scalar_op's form of `op` (on operands of dtype d) is the same IR on vectors (ops.def's
  // Vector column): IRBuilder's operations and intrinsics take vector operands, and constants
  // come from the operands' types; libm functions call libmvec where the target has it.
  bool vector_op(OpKind op, DType d) const;
  // The lanes of `v` at index `outer` of the walk's outer dims and [base, base + lanes) of its
  // inner dim; `mask`: the lanes in range (null: all).
  // `loaded`: the block's loads so far, by buffer (a buffer read twice is loaded once).
  llvm::Value* eval_vector(Scope& s, ValueId v, const Walk& w, const std::vector<llvm::Value*>& outer, llvm::Value* base,
                           unsigned lanes, llvm::Value* mask, std::vector<std::pair<const LVal*, llvm::Value*>>& loaded);
  // Non-temporal stores (lower_fused_vector.cpp): whether a vector loop writes `out` around the
  // cache (a result far larger than the last-level cache, in aligned whole blocks).
  bool streaming_output(const LVal& out, const Walk& w, DType d, unsigned lanes) const;
  // ---- reductions in vector registers (lower_reduce_vector.cpp) ----
  // The widest operands they take, in vector registers: a row of kept columns (columns); a row
  // (rows: a group of rows is straight code of lanes x vectors of the operand's expression. Rows
  // of 8 vectors, a layer norm over 128 floats, ran the transformer block 10% faster, but its
  // compile split 7 kernels into the second module instead of 4 and the first call took 40-54 ms
  // instead of 34-49, in straight code or in a loop over the vectors).
  static constexpr int64_t kMaxColumnVectors = 8, kMaxRowVectors = 2;
  using Combine = std::function<llvm::Value*(llvm::Value*, llvm::Value*)>;
  // The vector of elements [block * lanes, (block + 1) * lanes) of row `row` of a reduction's
  // operand (lanes: the target's register of its dtype); with a `mask`, only its lanes are read
  // (a row's last, partial block; the other lanes hold anything).
  using RowBlock = std::function<llvm::Value*(llvm::Value* row, llvm::Value* block, llvm::Value* mask)>;
  // x's RowBlock in its walk [R, C] (the walk's inner dim read contiguously or broadcast).
  RowBlock walk_blocks(Scope& s, ValueId x, const Walk& w, DType d);
  // Column reductions: whether x's walk [R, C] into `acc_view` (rows reduced, columns kept and
  // contiguous) fits: C a static multiple of the vector width, at most kMaxColumnVectors of them,
  // x's expression vectorizable.
  bool column_vectors_fit(Scope& s, ValueId x, const Walk& w, const LVal& acc_view, DType d);
  // out[j] = init combined with x[r, j] for r in [first, first + count), in r's order, the
  // columns in vector registers; stored into out[0, C).
  void column_reduction_vector(Scope& s, ValueId x, const Walk& w, DType d, llvm::Value* init, const Combine& combine,
                               llvm::Value* first, llvm::Value* count, llvm::Value* out);
  // The same for `blocks` vectors of columns of any operand: with chains > 1, row r goes to
  // accumulator set r % chains (independent chains of adds), the sets combined at the end.
  void column_vectors(DType d, int64_t blocks, llvm::Value* init, const Combine& combine, const RowBlock& element,
                      llvm::Value* first, llvm::Value* count, llvm::Value* out, int64_t chains);
  // Row reductions: whether x's walk [R, C] into `acc_view` (columns reduced, rows kept and
  // contiguous) fits: C static, at most kMaxRowVectors vectors, x's expression vectorizable; C a
  // multiple of the vector width, or (with masked loads: row_tail_fits) ending in a partial one.
  bool row_vectors_fit(Scope& s, ValueId x, const Walk& w, const LVal& acc_view, DType d);
  // The rows part of it, for any operand of a 2-D walk [R, C] reduced along C.
  bool rows_fit_vectors(Scope& s, ValueId x, const Walk& w, DType d);
  // The constant mask of a vector of `lanes` whose first `tail` lanes are set; null for 0.
  llvm::Value* lanes_below(unsigned lanes, int64_t tail);
  // Whether `rows` (-1: unknown) rows of `columns` elements of `d`, not a multiple of the vector
  // width, may end in a masked partial vector (a masked load: a plain instruction on AVX-512,
  // vmaskmov on AVX2): on AVX-512 a row over half a vector long, on AVX2 over a vector. Shorter
  // rows stay in memory, where LLVM vectorizes them across rows: the masked form measured slower
  // there (a max of exp over rows of 5-7 floats on AVX2, a sum of squares over rows of 2-6 floats
  // on AVX-512). So do fewer than kMinPartialRowElements elements in all: a group of rows is
  // straight code, and an MLP's softmax over [64, 10] grew its train step's code by a third
  // (compile time) to save well under a microsecond per call.
  bool row_tail_fits(int64_t rows, int64_t columns, DType d) const;
  static constexpr int64_t kMinPartialRowElements = 1 << 15;
  // out[r] = init combined with row r's elements, for r in [0, rows) (rows of `blocks` vectors,
  // the last holding only `tail` elements when tail > 0: read under a mask, its other lanes
  // replaced by init): each group of `lanes` rows folded into one vector and stored whole; the
  // order of a row's terms is a tree's (for float sums and products, which may be reassociated,
  // and for operations whose order does not matter).
  // `finish` (if given) turns each result (a vector of a group's, a row's scalar) into what is
  // stored: a keyed max's float.
  void row_vectors(DType d, int64_t blocks, int64_t tail, llvm::Value* rows, llvm::Value* init, const Combine& combine,
                   const RowBlock& element, llvm::Value* out,
                   const std::function<llvm::Value*(llvm::Value*)>& finish = nullptr);
  // A matrix-vector product (2-D, one side of size 1) whose other short side is static, as one
  // of the two forms above (lower_matvec.cpp); false when it does not apply.
  bool lower_matvec(Scope& s, uint32_t i, const LVal& a, const LVal& bm, llvm::Value* c);
  void lower_reduce(Scope& s, uint32_t i);                                         // lower_reduce.cpp
  // A fused reduction's value (lower_inline_reduction.cpp): described where it is planned, and
  // computed per element of the walk that reads it, its reduced elements unrolled.
  void describe_inline_reduction(Scope& s, uint32_t i);
  llvm::Value* eval_inline_reduction(Scope& s, ValueId v, const Walk& w, const std::vector<llvm::Value*>& idx);
  void lower_arg_reduce(Scope& s, uint32_t i);
  // Node i's arg-reduction over the last axis of a 2-D walk `w` (rows of at most kMaxRowVectors
  // vectors, whole or, where row_tail_fits, ending in a partial one) into `dst`, a row's vectors
  // at a time (lower_reduce_vector.cpp); false when it does not apply.
  bool arg_reduce_rows(Scope& s, uint32_t i, const Walk& w, llvm::Value* dst);
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
  // dst[c, r] = src[r, c] for a static [rows, cols] src (a transposed operand of a small matmul).
  llvm::Value* transpose_into(DType d, llvm::Value* src, llvm::Value* dst, int64_t rows, int64_t cols);
  std::optional<GemmPacking> gemm_packing(DType d, int64_t m, int64_t k, int64_t n) const;
  llvm::Value* pack_gemm_lhs(const GemmPacking& p, DType d, int64_t m, int64_t k, llvm::Value* a);
  llvm::Function* small_gemm_packed(const GemmPacking& p, DType d, int64_t m, int64_t k, int64_t n);
  void lower_layout(Scope& s, uint32_t i);  // lower_layout.cpp (LayoutLowering)
  void lower_scan(Scope& s, uint32_t i);    // lower_scan.cpp (ScanLowering)
  void lower_runtime_kernel(Scope& s, uint32_t i);  // lower_runtime_kernel.cpp: Window, Index families
  // A compiled scatter (fusion.h, compiled_scatter), its updates evaluated in its loop; a gather
  // fused into them, described where it is planned and read at the loop's index (lower_scatter.cpp).
  void lower_scatter(Scope& s, uint32_t i);
  // Its push form: row k of the updates combined into row indices[k], k in order.
  void push_scatter(Scope& s, uint32_t i, const LVal& out);
  // Its pull form (segment_pulls.h): each segment's result from its edges in `order`'s order.
  void pull_by_segment(Scope& s, uint32_t i, const LVal& out, const Scope::SegmentOrder& order);
  void describe_fused_gather(Scope& s, uint32_t i);
  llvm::Value* eval_gather(Scope& s, ValueId v, const std::vector<llvm::Value*>& idx);
  llvm::Value* gather_row(Scope& s, ValueId v) const;  // its row at the update row being emitted
  // The same on a block of a row (a scatter's rows as vector code): whether it applies (params a
  // contiguous [N, W] buffer of dtype d), and the lanes [base, base + lanes) of the current row.
  bool gather_vectorizable(Scope& s, ValueId v, DType d) const;
  llvm::Value* eval_gather_vector(Scope& s, ValueId v, llvm::Value* base, unsigned lanes, llvm::Value* mask);
  void lower_source(Scope& s, uint32_t i);                                         // lower_source.cpp
  void lower_stateful(Scope& s, uint32_t i);  // lower_state.cpp (StateLowering)
  void lower_list(Scope& s, uint32_t i);
  void lower_if(Scope& s, uint32_t i);                                             // lower_control.cpp
  llvm::Value* child_arena(Scope& s, uint32_t i);
  void lower_while(Scope& s, uint32_t i);
  void lower_per_element_while(Scope& s, uint32_t i);  // lower_per_element_while.cpp

 private:
  void emit_results(Scope& root);

  std::unordered_set<const llvm::Value*> aligned_results_;  // the entry's static results: 64-byte-aligned buffers
  std::vector<PendingCheck>* pending_checks_ = nullptr;     // the vector block being emitted collects its checks
  // The fused gathers' rows at the update row a scatter's loop is emitting (lower_scatter.cpp),
  // each loaded and checked once per row.
  std::vector<std::pair<const LVal*, llvm::Value*>> gather_rows_;
  const bool vector_math_;                                  // has_vector_math()
};

// The base of an object that lowers one node in steps, one method each (WhileLowering,
// ReductionLowering): the emitter, its builder, the scope and the node.
struct NodeLowering {
  NodeLowering(Emitter& e, Scope& s, uint32_t i) : e_(e), b_(e.b()), s_(s), i_(i), n_(s.graph().nodes[i]) {}

  // For the runtime helpers that take tensors (emitter.cpp): fills the JitArg at `arg` (data
  // pointer, dims) for a value; a JitArg array on the stack describing the node's inputs.
  void fill_arg(llvm::Value* arg, const LVal& v);
  llvm::Value* input_args();

  Emitter& e_;
  llvm::IRBuilder<>& b_;
  Scope& s_;
  const uint32_t i_;
  const Node& n_;
};

}  // namespace ag::jit
