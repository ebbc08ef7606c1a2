// Tracing frames. A frame is a graph under construction: the root frame is a Function's trace,
// nested frames are the sub-graphs of staged If/While. Symbolic tensors point at their frame
// through a token that outlives it, which is how leaked tensors are detected.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ag/graph/graph.h"
#include "ag/tensor.h"

namespace ag::detail {

class TraceFrame;

struct FrameToken {
  std::atomic<int32_t> refs{1};
  bool open = true;
  TraceFrame* frame = nullptr;
  std::shared_ptr<const std::string> function_name;  // the traced Function, for leak messages
};

// Facts about the Function being traced, shared by all frames of one trace.
// A variable given its first value inside a staged loop has none after the loop when it ran
// zero times (TensorFlow raises InvalidArgumentError then): `defined` is the loop's "it ran"
// flag, and each frame that reads the variable asserts it there, where the read happens (so a
// read in a branch that does not run does not raise).
struct DefinedCheck {
  Tensor defined;       // a bool scalar of the frame that built the loop
  std::string message;  // names the variable and the loop
};

struct TraceRoot {
  std::shared_ptr<const std::string> function_name;
  bool first_trace = true;  // Variables may be created only on a Function's first trace
  bool autograph = true;     // FunctionOptions::autograph: false stages no converted construct
  // The first trace created Variables, and this is its repeat, which must create none (TensorFlow
  // traces such a Function twice on its first call: a Function that creates a Variable on every
  // trace would create a new one on every retrace).
  bool singleton_check = false;
  int64_t variables_created = 0;
  int64_t unrolled_iterations = 0;  // iterations of plain loops over concrete tensors (a warning sign)
  std::deque<DefinedCheck> defined_checks;  // (a deque: TensorImpls point at its elements)
};

// An outer value a sub-graph reads: `outer` is symbolic in the parent frame, `param` the
// Placeholder node standing for it inside this frame.
struct Capture {
  Tensor outer;
  uint32_t param;
};

class TraceFrame {
 public:
  TraceFrame(TraceFrame* parent, std::shared_ptr<TraceRoot> root, std::string name, SourceLoc loc);
  ~TraceFrame();
  TraceFrame(const TraceFrame&) = delete;
  TraceFrame& operator=(const TraceFrame&) = delete;

  Graph graph;
  TraceFrame* const parent;
  const std::shared_ptr<TraceRoot> root;
  const SourceLoc loc;
  const int depth;  // frames above this one in its trace (bounded: trace_depth.h)

  // The value `t` has in this frame: its own node, a capture of an enclosing frame's value, or
  // a Const for a concrete tensor. `op`/`loc` name the reader in errors.
  ValueId value_of(const Tensor& t, OpKind op, SourceLoc loc);
  // A symbolic tensor for value `v` of this frame's graph.
  Tensor symbolic(ValueId v);
  ValueId emit(Node n);
  Tensor add_param(const TensorType& type, std::string name);
  const std::vector<Capture>& captures() const { return captures_; }
  // A concrete tensor that a tape recording in this frame watches, lifted to a value of this
  // frame (an identity node): sub-graphs then capture it as an input rather than as a
  // constant, so its gradient flows out of staged branches and loops (tape.cpp).
  const Tensor* lifted(const Tensor& concrete) const;
  void lift(const Tensor& concrete, Tensor value);
  // Closes the frame: its tensors become "leaked" if used later. Idempotent.
  void close();
  bool is_ancestor_of(const TraceFrame* f) const;

  // Undo everything added to this frame and its ancestors since a checkpoint (used when a
  // loop condition was evaluated only to learn its type).
  struct Checkpoint {
    struct Entry {
      TraceFrame* frame;
      size_t nodes, params, captures;
    };
    std::vector<Entry> entries;
  };
  Checkpoint checkpoint();
  void rollback(const Checkpoint& cp);

 private:
  // `read`: the value is read in this frame (a capture passing it on is not a read).
  ValueId value_of(const Tensor& t, OpKind op, SourceLoc loc, bool read);
  FrameToken* token_;
  std::vector<Capture> captures_;
  std::map<std::tuple<const FrameToken*, uint32_t, uint32_t>, uint32_t> capture_index_;
  std::unordered_map<const TensorImpl*, ValueId> consts_;
  std::vector<Tensor> const_keepalive_;  // keeps impl addresses in consts_ from being reused
  std::unordered_set<const DefinedCheck*> asserted_;  // the checks this frame's graph asserts
  // lifted(): the concrete tensor (kept alive, so that its address is not reused) and its value.
  std::unordered_map<const TensorImpl*, std::pair<Tensor, Tensor>> lifted_;
};

// The frame being traced on this thread (null: not tracing). Inline and constant-initialized so
// that the cached-call path reads it without a call or a TLS wrapper.
inline constinit thread_local TraceFrame* t_current_frame = nullptr;
inline TraceFrame* current_frame() { return t_current_frame; }
inline bool is_tracing() { return t_current_frame != nullptr; }

// Makes `frame` current for the lifetime of the scope.
class FrameScope {
 public:
  explicit FrameScope(TraceFrame* frame);
  ~FrameScope();
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;

 private:
  TraceFrame* saved_;
};

// Records op on symbolic inputs into the current frame; returns its (single) output.
Tensor trace_op(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc);
// Records a node with explicit output types (multi-output or zero-output nodes).
std::vector<Tensor> trace_node(OpKind op, std::span<const Tensor> inputs, Attrs attrs, std::vector<TensorType> outputs,
                               std::vector<std::shared_ptr<const Graph>> subgraphs, SourceLoc loc);

[[noreturn]] void throw_leaked(const Tensor& t, SourceLoc loc);

}  // namespace ag::detail
