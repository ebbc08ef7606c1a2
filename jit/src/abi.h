// The calling convention between JIT code and the runtime: argument descriptors, the per-call
// context, and the C helpers JIT code calls (bound into the JIT with absoluteSymbols). No LLVM.
#pragma once

#include <cstdint>

#include "ag/detail/jit_abi.h"  // JitArg, JitCallCtx, EntryFn: the entry point's side

namespace ag::jit {

enum class CtxField : int { OutData = 0, OutDims = 1, Consts = 2, State = 3 };

inline constexpr const char* kEntrySymbol = "agc_entry";

// Run-time failures JIT code detects; agc_rt_fail formats the message for the node.
enum class FailKind : int32_t {
  DivisionByZero,     // a: unused
  NegativePower,      // a: the exponent
  GatherIndex,        // a: the index, b: the dim
  Broadcast,          // a, b: the two dims that do not broadcast
  Reshape,            // a: elements of the input, b: elements of the new shape
  ConcatDims,         // a, b: the mismatching dims
  SliceRange,         // a: begin + size, b: the dim
  ArgEmpty,           // the arg-reduced dim is empty
  RangeDeltaZero,     // range with delta 0
  MatMulInner,        // a, b: the inner dims
  RuntimeType,        // a value from the runtime does not have the type the code was compiled for
  RangeTooLarge,      // a: the number of elements of a range too large to allocate
  Squeeze,            // a: the size of a dim that squeeze was asked to remove
  EnsureShape,        // a: the size of dim b, which ensure_shape's shape gives another size
  NonFinite,          // check_numerics: a: the flat element (-1: not known), b: detail::NonFiniteKind
  ScatterIndex,       // a: the row index, b: the rows
};

}  // namespace ag::jit

// The helpers' declarations. Each has a row in rt_helpers.def, from which the IR declarations
// and the symbol bindings are generated; engine.cpp checks at compile time that these C
// signatures match the rows.
extern "C" {
// Buffers owned by JIT code whose size is only known at run time (64-byte aligned, from the
// runtime's caching allocator for large sizes). The call tracks them, so an error path leaks none.
void* agc_rt_alloc(ag::jit::JitCallCtx* ctx, int64_t bytes);
void agc_rt_free(ag::jit::JitCallCtx* ctx, void* p);
// Allocates result `index` (a dynamically shaped output) as an ag::Tensor of `elements` elements.
// Its final shape comes from out_dims after the call (the buffer may be written through a value
// of another rank that the result views).
void* agc_rt_output(ag::jit::JitCallCtx* ctx, int32_t index, int64_t elements);
// After agc_rt_alloc or agc_rt_output returned null: records the ResourceExhaustedError naming
// output `output` of node `node` (a global node id) with its run-time `dims` (null: its static
// shape). `block_bytes` > 0: the allocation was the arena of that size, of which the value is
// the largest part. The JIT code then returns 1.
void agc_rt_out_of_memory(ag::jit::JitCallCtx* ctx, int32_t node, int32_t output, const int64_t* dims,
                          int64_t block_bytes);
// Records a run-time error of node `node` (a global node id); the JIT code then returns 1.
void agc_rt_fail(ag::jit::JitCallCtx* ctx, int32_t node, int32_t kind, int64_t a, int64_t b);
// TensorArrays (rt_list_helpers.cpp). A handle lives in a runtime slot (NodeInfo::in_slots,
// out_slot); its elements are one contiguous buffer. Each returns 0, or 1 with the error recorded
// (the eager kernel's: an index out of range, an element shape that differs, memory).
// A TensorArray captured as a constant (Const node `node`): its handle into the node's slot.
int32_t agc_rt_list_const(ag::jit::JitCallCtx* ctx, int32_t node);
// ListWrite: element `index` = `value` (dims of the value's static rank), in place when the code
// holds the only reference to the list, else in a copy; the result handle goes to the node's slot.
int32_t agc_rt_list_write(ag::jit::JitCallCtx* ctx, int32_t node, int64_t index, const ag::jit::JitArg* value);
// ListRead: `*data` = the element's data inside the list (the code copies it before anything
// else runs), `dims` = its dims (an array of the result's rank).
int32_t agc_rt_list_read(ag::jit::JitCallCtx* ctx, int32_t node, int64_t index, int64_t* dims, const void** data);
// ListStack: `*data` = the list's buffer ([size] + element shape, row-major) or null when no
// element was ever written (the result is zeros), `dims` = the stacked dims.
int32_t agc_rt_list_stack(ag::jit::JitCallCtx* ctx, int32_t node, int64_t* dims, const void** data);
// ListSize: the element count.
int64_t agc_rt_list_size(ag::jit::JitCallCtx* ctx, int32_t node);
// Variables (rt_state_helpers.cpp). `var` is the node's ag::detail::VariableState, which JIT code
// finds in ctx->consts[node]. Each helper holds the variable's mutex for the whole access, as
// the eager kernels do: a read copies one whole value, an assignment replaces it whole, and
// assign_add/assign_sub are one read-modify-write. No allocation and no type inference: the value
// is written in place unless an eager reader still holds its tensor (copy-on-write).
// Copies the variable's value into `dst` (a buffer of its static size).
void agc_rt_var_read(void* var, void* dst);
// The assignment of node `node` (assign, assign_add or assign_sub) with operand `in` (its dims of
// the operand's static rank); the new value is also copied to `result` unless it is null. Returns
// 0, or 1 with the error recorded (the eager kernel's error: a shape that does not fit, memory).
int32_t agc_rt_var_assign(ag::jit::JitCallCtx* ctx, int32_t node, void* var, const ag::jit::JitArg* in, void* result);
// assign_add (subtract 0) or assign_sub (1) of node `node` with the scalar at `operand` to a
// scalar variable: agc_rt_var_assign's read-modify-write without its dispatch on shapes, for the
// counters and accumulators of staged loops. A value an eager reader shares (copy-on-write) or a
// variable that is not a numeric scalar takes agc_rt_var_assign. Same results and errors.
int32_t agc_rt_var_add_scalar(ag::jit::JitCallCtx* ctx, int32_t node, int32_t subtract, void* var, const void* operand,
                              void* result);
// AssignVariable node `node` of a value the code computed in `data`, a buffer of agc_rt_alloc of
// the variable's type: the buffer becomes the variable's value (no copy; the old value goes when
// its last reader lets it go). Returns 0, or 1 with the error recorded.
int32_t agc_rt_var_assign_owned(ag::jit::JitCallCtx* ctx, int32_t node, void* var, void* data);
// The variable's value, read in place: its tensor is held in the call's slot `slot` until
// agc_rt_var_release (or the call's end), so an assignment made meanwhile replaces the value by a
// copy (copy-on-write) and the data returned never changes. No copy, no allocation.
const void* agc_rt_var_borrow(ag::jit::JitCallCtx* ctx, int32_t slot, void* var);
// Drops the tensor agc_rt_var_borrow holds in slot `slot` (the value's last use is past).
void agc_rt_var_release(ag::jit::JitCallCtx* ctx, int32_t slot);
// For assign_add/assign_sub node `node` updating in place (lower_state.cpp): locks the variable
// and returns its buffer, safe to write (copied first when an eager reader or a borrowed read
// shares it), for the loop the code runs next; agc_rt_var_update_end(var) unlocks it. Null, with
// the error recorded and the lock released, when the value is not of the node's type or memory
// runs out.
void* agc_rt_var_update_begin(ag::jit::JitCallCtx* ctx, int32_t node, void* var);
void agc_rt_var_update_end(void* var);
// ag::print of node `node`: formats its text items (attrs) and tensor inputs `ins` (views of the
// JIT buffers, no copies) and prints the line. Returns 0, or 1 with the error recorded.
int32_t agc_rt_print(ag::jit::JitCallCtx* ctx, int32_t node, const ag::jit::JitArg* ins);
// Random draw node `node` (RandomUniform / RandomNormal) from the Generator state
// `generator_state` (its VariableState, from ctx->consts): takes its words and advances the
// counter atomically, then fills `out` (the node's static shape) with the process's per-ISA
// stream kernel, the eager one. Returns 0, or 1 with the error recorded.
int32_t agc_rt_random(ag::jit::JitCallCtx* ctx, int32_t node, void* generator_state, void* out);
// Code compiled while a profile runs (JitConfig::profile): the steady clock in nanoseconds, and
// the event of top-level node `node`'s lowering that began at `begin_ns` (nothing when no profile
// runs now).
int64_t agc_rt_clock(ag::jit::JitCallCtx* ctx);
void agc_rt_profile_node(ag::jit::JitCallCtx* ctx, int32_t node, int64_t begin_ns);
// PureCallback / IoCallback: runs the node's C++ callback on copies of `ins` and copies its
// result (checked against the spec) to `out`, a buffer of the result's static size. 0, or 1
// with the error recorded.
int32_t agc_rt_callback(ag::jit::JitCallCtx* ctx, int32_t node, const ag::jit::JitArg* ins, void* out);
// AllReduce / CollectiveBroadcast / AllGather (ag::distribute): the engine's collective from
// ins[0]'s buffer into `out` (the result's size). 0, or 1 with the error recorded (a mismatch
// between processes, a timeout).
int32_t agc_rt_collective(ag::jit::JitCallCtx* ctx, int32_t node, const ag::jit::JitArg* ins, void* out);
// The same draw inlined into the loop that consumes it: takes its words as agc_rt_random does and
// stores the seed and the counter of its first word in words[0], words[1]; the code computes the
// elements (lower/lower_random.cpp). Returns 0, or 1 with the error recorded.
int32_t agc_rt_random_words(ag::jit::JitCallCtx* ctx, int32_t node, void* generator_state, uint64_t* words);
// The JIT code found a false element in Assert node `node`'s condition: records the eager
// kernel's InvalidArgumentError (message from the attrs, values from `ins`). The code returns 1.
// An op of the Window or Index family (ag/detail/runtime_kernels.h) of node `node` on the inputs
// `ins`: its result's dims, checked against each other (a shape known only at run time), and its
// result computed into `out`. Return 0, or 1 with the call's error set.
int32_t agc_rt_kernel_dims(ag::jit::JitCallCtx* ctx, int32_t node, const ag::jit::JitArg* ins, int64_t* dims);
int32_t agc_rt_kernel(ag::jit::JitCallCtx* ctx, int32_t node, const ag::jit::JitArg* ins, void* out);
void agc_rt_assert_failed(ag::jit::JitCallCtx* ctx, int32_t node, const ag::jit::JitArg* ins);
// Copies (or moves) the tensor in slot `from` to slot `to` (TensorArray handles through If/While).
void agc_rt_slot_copy(ag::jit::JitCallCtx* ctx, int32_t from, int32_t to, int32_t move);
// Runs worker(closure, begin, end) over [0, n) on the shared thread pool, in ranges of at
// least `grain` that begin at multiples of `unit` (a parallel loop outlined by the emitter:
// parallel_loops.cpp).
void agc_rt_parallel_for(void (*worker)(void*, int64_t, int64_t), void* closure, int64_t n, int64_t grain, int64_t unit);
// Integer powers with wrap-around, like the eager kernel (the exponent is checked by the caller).
int32_t agc_rt_ipow_i32(int32_t base, int32_t exponent);
int64_t agc_rt_ipow_i64(int64_t base, int64_t exponent);
// Packs the left operand a[m,k] (elements of elem_bytes: 4 or 8) of a small product for one
// column segment `width` wide (lower_matmul_packed.cpp): vector v * k + kk of `ap`, `lanes`
// elements, holds in lane l a[v * R + l / width, kk] (0 past row m), R = lanes / width.
void agc_rt_pack_gemm_lhs(const void* a, void* ap, int64_t m, int64_t k, int64_t width, int64_t lanes, int64_t elem_bytes);
// agc_rt_gemm_{f32,f64,i32,i64}(a, b, c, m, k, n): row-major C[m,n] = A[m,k] * B[k,n] for large
// or dynamically shaped matmuls, bound to the eager kernels' GEMM of the process's
// instruction-set level (ag::detail::kernels(), see engine.cpp).
// A GEMM's B operand (float64 != 0: doubles, else floats) packed once, before a staged loop whose
// products by it all have the shapes m, k, n (lower/lower_control.cpp): a buffer the call owns,
// or null (the products then read B). agc_rt_gemm_packed_b_{f32,f64}(a, b, packed, c, m, k, n,
// transposes) are the GEMM reading it, bound to the process's kernel set like the GEMM.
void* agc_rt_gemm_pack_b(ag::jit::JitCallCtx* ctx, int32_t float64, const void* b, int64_t m, int64_t k, int64_t n,
                         int64_t transposes);
// The edges of a segment sum pulled by segment (segment_pulls.h), ordered once before its staged
// loop: a block the call owns (segment_order_layout, records with their edge when with_edge), or
// null when it cannot be had. ids: int64 when ids_64, else int32; negative ids are dropped. Fused
// gather g's indices are gather_indices[g], int64 when gather_info[2g] != 0, checked against
// gather_info[2g + 1] rows. When an id is `segments` or more or an index is out of range, the
// block's `ok` is 0 and its header describes the error the push raises (the loop raises it).
void* agc_rt_segment_order(ag::jit::JitCallCtx* ctx, const void* ids, int32_t ids_64, int64_t edges, int64_t segments,
                           int64_t gathers, int32_t with_edge, const void* const* gather_indices, const int64_t* gather_info);
}
