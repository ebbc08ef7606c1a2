// The graph IR: SSA values, nodes in topological (program) order, functional If/While nodes
// that own self-contained sub-graphs (functions of their inputs).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ag/error.h"
#include "ag/graph/attrs.h"
#include "ag/graph/op.h"

namespace ag {

// The static type of a value: dtype and shape (dims may be -1 = unknown). `rank_unknown`: not
// even the rank is known (`shape` is then empty), as for a value traced from an unknown-rank
// TensorSpec or given different ranks by the branches of a staged if (TensorFlow's
// TensorShape(None)); any shape fits it. For List values (TensorArray handles) `shape` is the
// element shape and `elem_dtype` the element dtype; `rank_unknown` marks a list no write has
// typed yet (tf.TensorArray without an element_shape), and the first write fixes it.
struct TensorType {
  DType dtype = DType::Float32;
  Shape shape;
  DType elem_dtype = DType::Float32;
  bool rank_unknown = false;
  // A List whose elements may differ in shape (TensorArray(..., infer_shape = false)): a write
  // joins the element shape with the value's (dims that differ become unknown).
  bool elem_shape_varies = false;

  std::string str() const;  // "f32[2,?]", "f32[*]", "list<f32[?]>", "list<f32[*]>"
  // A tensor (not a List) whose rank is not known.
  bool has_unknown_rank() const { return rank_unknown && dtype != DType::List; }
  static TensorType unknown_rank(DType dtype) {
    TensorType t{dtype, Shape{}};
    t.rank_unknown = true;
    return t;
  }
  // A List whose element shape is not known yet.
  bool is_untyped_list() const { return dtype == DType::List && rank_unknown; }
  friend bool operator==(const TensorType& a, const TensorType& b) {
    return a.dtype == b.dtype && a.shape == b.shape &&
           a.rank_unknown == b.rank_unknown &&
           (a.dtype != DType::List || (a.elem_dtype == b.elem_dtype && a.elem_shape_varies == b.elem_shape_varies));
  }
};

struct ValueId {
  uint32_t node = 0;
  uint32_t index = 0;
  friend bool operator==(ValueId a, ValueId b) { return a.node == b.node && a.index == b.index; }
  friend bool operator<(ValueId a, ValueId b) { return a.node != b.node ? a.node < b.node : a.index < b.index; }
};

class Graph;

struct Node {
  OpKind op = OpKind::Identity;
  std::vector<ValueId> inputs;
  std::vector<TensorType> outputs;
  Attrs attrs;
  // If: {then, else}; each takes the node's inputs after the condition.
  // While: {cond, body}; each takes all the node's inputs (loop vars, then invariants);
  //        cond returns one bool scalar, body returns the new loop vars.
  std::vector<std::shared_ptr<const Graph>> subgraphs;
  SourceLoc loc;
};

class Graph {
 public:
  std::string name;
  std::vector<Node> nodes;
  std::vector<uint32_t> params;  // Placeholder node ids, in parameter order
  std::vector<ValueId> results;

  const TensorType& type(ValueId v) const { return nodes[v.node].outputs[v.index]; }
  const Node& producer(ValueId v) const { return nodes[v.node]; }
  size_t num_params() const { return params.size(); }
  ValueId param(size_t i) const { return {params[i], 0}; }

  // Appends a node (its inputs must already exist) and returns its first output.
  ValueId add(Node n);
  ValueId add_param(TensorType type, SourceLoc loc = {});
};

// True when running `n` may raise on some values of inputs that have its inputs' static types:
// its op's Raises column (ops.def) read with the node's dtypes and static shapes. What a pass
// asks before it runs a node where the program might not have (loop-invariant code motion).
bool may_raise(const Graph& g, const Node& n);
// The same without the errors of run-time dims (for code that checks dims before any work).
bool may_raise_on_values(const Node& n);

// The first value of unknown rank in `g` or its sub-graphs, as "%3 (f32[*], file.cpp:12)"; ""
// when every rank is known (what compiled code needs).
std::string first_unknown_rank_value(const Graph& g);

}  // namespace ag
