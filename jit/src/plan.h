// The plan of a concrete function, made before any IR exists: where each value lives (register,
// fused into its consumer's loop, arena slot, owned buffer, result destination, runtime slot),
// liveness, the static arena layout, and the global node table the runtime helpers index. No LLVM.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "ag/graph/graph.h"
#include "jit_config.h"

namespace ag::jit {

enum class ValueStorage : uint8_t {
  Reg,    // static single element: an SSA register, never in memory
  Fused,  // elementwise value computed inside the loop of the value that consumes it
  Arena,  // static size: an offset in the scope's arena
  Owned,  // size known at run time: agc_rt_alloc'd when defined, freed after its last use
  Dest,   // written straight into the sink of result `dest` (output buffer, If output)
  Param,  // bound by the parent: a function argument, or the operand of an If/While
  Const,  // a constant's buffer (borrowed from the graph)
  Slot,   // a tensor held by the runtime (TensorArray handle, variable value, list element)
  // A Variable's value read in place (a read, or an assignment's result, in the function's own
  // scope): the call holds the value's tensor in `slot` from the read to the last use, so that an
  // assignment made meanwhile (by this call or another thread) replaces the variable's value by a
  // copy instead of writing into it; released then. Read-only: nothing is computed into it.
  Borrowed,
  View,   // the buffer of `root` with other dims (reshape, expand_dims, squeeze, identity)
  Box,    // an update written straight into the box of SliceUpdate `root`'s result (no copy)
  None,   // no value (Print)
};

struct ValuePlan {
  ValueStorage storage = ValueStorage::None;
  int64_t offset = 0;     // Arena: byte offset in the scope's arena
  int32_t dest = -1;      // Dest: the result index whose sink this value is written to
  int32_t slot = -1;      // Slot: the runtime slot
  ValueId root{};         // View: the value owning the buffer (never itself a View); Box: the SliceUpdate
  // While outputs: arena offset of the loop state's second buffer, or -1. The body writes each
  // iteration's state into the buffer the last one did not use (plan_updates.h, mark_twins).
  int64_t twin_offset = -1;
  // Owned: the buffer is handed to the Variable that AssignVariable assigns it to (it becomes the
  // variable's value, no copy), so it is never freed here.
  bool donated = false;
  int32_t last_use = -1;  // index of the last node in this scope using it; num_nodes = a result
};

enum class ScopeKind : uint8_t { Function, IfBranch, WhileCond, WhileBody };

struct ScopePlan {
  const Graph* graph = nullptr;
  ScopeKind kind = ScopeKind::Function;
  int32_t first_node_id = 0;                        // global id of graph->nodes[0]
  std::vector<std::vector<ValuePlan>> values;       // [node][output]
  std::vector<std::vector<ValueId>> free_after;     // [node]: Owned and Borrowed values that die there
  std::vector<ValueId> free_at_end;                 // Owned and Borrowed values alive until the results
  std::vector<std::vector<std::unique_ptr<ScopePlan>>> children;  // [node][subgraph]
  std::vector<int64_t> scratch_offset;              // [node]: arena offset of its children's arenas
  std::vector<std::vector<uint32_t>> groups;        // [node]: the fused groups (by root) it is in
  int64_t arena_bytes = 0;
  // The largest value in the arena, its children's included (global node id, output, bytes):
  // what an out-of-memory error names when the arena cannot be allocated.
  int32_t largest_node = -1;
  uint32_t largest_output = 0;
  int64_t largest_bytes = 0;

  const ValuePlan& at(ValueId v) const { return values[v.node][v.index]; }
  // The value owning v's buffer: a view's root, or v itself.
  ValueId buffer_of(ValueId v) const { return at(v).storage == ValueStorage::View ? at(v).root : v; }
  int32_t node_id(uint32_t node) const { return first_node_id + static_cast<int32_t>(node); }
};

// What the runtime helpers need to know about a node (indexed by global node id).
struct NodeInfo {
  const Node* node = nullptr;
  std::vector<TensorType> input_types;
  std::vector<int32_t> in_slots;  // per input: its slot, or -1 for a tensor passed as JitArg
  int32_t out_slot = -1;
  uint32_t consume = 0;           // bit i: input i's slot may be moved from (its last use)
};

enum class ResultKind : uint8_t { Computed, FromParam, FromConst, FromSlot };

struct ResultPlan {
  ResultKind kind = ResultKind::Computed;
  int32_t index = 0;  // FromParam: parameter index; FromConst: global node id; FromSlot: slot
  TensorType type;
  bool static_shape = true;
};

struct Program {
  std::shared_ptr<const Graph> graph;
  std::unique_ptr<ScopePlan> root;
  std::vector<NodeInfo> nodes;  // by global node id
  std::vector<ResultPlan> results;
  std::vector<int32_t> param_slots;  // per parameter: its slot (TensorArray arguments) or -1
  int32_t num_slots = 0;
  // Buffers of more than one element the program computes in loops of its own, sub-graphs
  // included (matmul kernels are shared functions and not counted): the function's size, as
  // LLVM's optimizer and code generator see it.
  int64_t loop_nests = 0;
  // Products in staged loops whose B operand is packed once before the loop (matmul_forms.h).
  // Set by apply_config, as is rolled_loops.
  int64_t packed_operands = 0;
  // Segment sums in staged loops pulled by segment (segment_pulls.h). Set by apply_config.
  int64_t pulled_segments = 0;
  // Outer loops stay loops: LLVM may not unroll them, and row reductions accumulate in
  // registers (docs/jit.md, "Compile times"). Set by the backend from loop_nests.
  bool rolled_loops = false;
  // The settings this program is compiled under (set by the backend: apply_config).
  JitConfig config;
};

// f(body, loop_vars) for the body of each staged loop (a While not run element by element) of
// `s` and its sub-scopes: what is done once before a loop for what its body does not change.
void for_each_loop_body(const ScopePlan& s, const std::function<void(const ScopePlan& body, int64_t loop_vars)>& f);
// The parameter of While body `body` that value `v` is, when it is a capture (past the
// `loop_vars` loop variables: the loop leaves it as it is); -1 otherwise.
int64_t loop_capture(const Graph& body, ValueId v, int64_t loop_vars);

// f(body, node) for each product in a staged loop of `s` and its sub-scopes whose B operand is
// packed before the loop (matmul_forms.h; unless AG_JIT_PACK_WEIGHTS=0).
void for_each_packed_operand(const ScopePlan& s, const std::function<void(const Graph& body, uint32_t node)>& f);

// Compiles `program` under `config`: its settings, and what they decide of the plan (rolled
// loops, packed loop weights).
void apply_config(Program& program, const JitConfig& config);

// Plans `graph` and its sub-graphs (recursively, one ScopePlan per If/While instance), after
// marking the Whiles that run element by element (per_element_loops.h): Program::graph is then
// that graph.
Program plan_program(std::shared_ptr<const Graph> graph);

// Static byte size of a value of this type, or -1 when a dim is unknown.
int64_t static_bytes(const TensorType& t);
// True for a value kept in a register: a numeric/bool type with one element, statically.
bool is_register_type(const TensorType& t);
// Ops lowered as elementwise expressions (candidates for fusion).
bool is_elementwise_expr(OpKind op);
// A draw computed inside the loop of the value that consumes it (the counter-based stream
// inlined): RandomUniform of a float dtype. Its words are still taken at its own position.
bool is_inlined_draw(const Node& n);
// Ops that may write their result over their first operand's buffer when nothing reads it
// afterwards (update_in_place): a slice update (only its box is written), an all-reduce or a
// broadcast (the engine's MPI_IN_PLACE).
bool writes_in_place(OpKind op);
// Ops whose output aliases their input's buffer.
bool is_view_op(OpKind op);

}  // namespace ag::jit
