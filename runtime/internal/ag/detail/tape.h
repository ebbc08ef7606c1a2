// The hooks through which ops reach the gradient tapes (runtime/src/grad/). Every op goes
// through apply_op, which pays one thread-local load to learn that no tape records; the rest
// runs only while a tape does.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "ag/graph/graph.h"
#include "ag/tensor.h"

namespace ag::detail {

struct VariableState;
class CallBackward;

// The number of GradientTapes alive on this thread.
inline constinit thread_local int t_live_tapes = 0;
inline bool tapes_alive() { return t_live_tapes != 0; }

// While an ag::custom_gradient forward runs: the Variables it reads (custom_gradient.cpp).
inline constinit thread_local std::vector<std::shared_ptr<VariableState>>* t_variable_reads = nullptr;

// While library code runs on the user's behalf, the user's line: while a gradient rule runs, the
// line of the forward op it differentiates; while an optimizer applies gradients, the line that
// called apply_gradients. The ops it applies take it (graph nodes, tape entries and errors),
// so they name the user's line, not agc's own file.
inline constinit thread_local SourceLoc t_caller_loc{};

// Sets t_caller_loc for a scope (an unknown `loc` clears it: a replay keeps each node's own).
class CallerLocScope {
 public:
  explicit CallerLocScope(SourceLoc loc) : saved_(t_caller_loc) { t_caller_loc = loc; }
  ~CallerLocScope() { t_caller_loc = saved_; }
  CallerLocScope(const CallerLocScope&) = delete;
  CallerLocScope& operator=(const CallerLocScope&) = delete;

 private:
  SourceLoc saved_;
};

// After an op made `outputs` from `inputs` (eagerly or in the frame being traced): records it on
// every tape recording in this frame that follows one of the inputs, and follows the outputs.
void tape_record(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc,
                 std::span<const Tensor> outputs, const std::vector<std::shared_ptr<const Graph>>& subgraphs = {});
// A read of Variable `v` gave `value`: returns the tensor to hand out, which every tape
// recording in this frame watches as a read of `v` (eagerly a fresh alias of the value, so that
// each read is its own source).
Tensor tape_variable_read(const std::shared_ptr<VariableState>& v, Tensor value);
class TraceFrame;
// Frame `frame` captured `outer` (a value of an enclosing frame) as its value `inner`: a tape
// recording in `frame` that follows `outer` records the capture as an identity, so that the
// gradient a construct built there gives `inner` (an input of its node) reaches `outer`.
void tape_note_capture(TraceFrame* frame, const Tensor& outer, const Tensor& inner);

// Frame `frame` dropped its nodes from `first_dropped` on (TraceFrame::rollback: a loop
// condition's probe, a loop traced again): every tape recording there forgets what it recorded
// of them. Their ids are reused by the nodes traced next, and a tape that kept following them
// would take those for the dropped ones (a gradient through the probe of a condition).
void tape_rollback(TraceFrame* frame, uint32_t first_dropped);

// A fresh identity for a concrete tensor (same buffer): an eager TensorArray write, done in
// place, gives the array a new handle so that the tape tells the array before and after apart.
Tensor tape_alias(const Tensor& t);

// Whether a tape records in the frame being traced (a Function called there is replayed op by op).
bool tape_records_in_current_frame();

// Whether a tape recording eagerly (outside any trace) follows one of `inputs`, or watches
// Variables and `reads_variables`: then a Function call runs its graph op by op, recorded.
bool eager_tape_follows(std::span<const Tensor> inputs, bool reads_variables);

// A call of a concrete function made eagerly: every recording tape that follows one of its
// inputs (or watches the Variables it reads) records the call as one op, differentiated by
// `backward` from the `residuals` its forward returned (grad/call_backward.h).
void tape_record_call(const std::shared_ptr<const CallBackward>& backward, std::span<const Tensor> inputs,
                      std::span<const Tensor> outputs, std::vector<Tensor> residuals);

// A test hook: the gradient rule of `op` becomes deliberately wrong (its results 1% too large),
// to prove that the gradient checks catch a wrong rule; nullopt restores it (grad_table.cpp).
void set_gradient_canary(std::optional<OpKind> op);

// How many times a Function call's compiled backward has run in this process (grad/call_backward.cpp):
// the tests check that path ran.
uint64_t call_backward_runs();
// Of those, the runs as a recorded Function that recomputes the forward (a tape recorded them);
// the others ran the backward half of the pair on the residuals.
uint64_t call_backward_recorded_runs();

// What a replay lets its caller do at the nodes of the replayed graph itself (not of its
// sub-graphs): a while loop's gradient saves what its body observes of a TensorArray it carries
// and gives the saved values back when it replays a step (while_gradient.cpp).
struct ReplayHooks {
  // Before node `id` runs: return true with its outputs in `out` to skip running it.
  std::function<bool(uint32_t id, const Node& n, std::span<const Tensor> in, std::vector<Tensor>& out)> replace;
  // After node `id` ran (or was replaced), with its outputs.
  std::function<void(uint32_t id, std::span<const Tensor> out)> after;
};

// Runs `g` op by op through apply_op (so tapes record each op): eagerly, or, while tracing, into
// the current frame. Stateful ops run once, as in the graph. (replay.cpp)
void replay_graph(const Graph& g, std::span<const Tensor> inputs, std::span<Tensor> outputs,
                  const ReplayHooks* hooks = nullptr);

}  // namespace ag::detail
