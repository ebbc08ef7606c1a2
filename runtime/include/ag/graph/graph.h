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

// The static type of a value: dtype and shape (dims may be -1 = unknown). For List values
// (TensorArray handles) `shape` is the element shape and `elem_dtype` the element dtype;
// `elem_rank_unknown` marks a list no write has typed yet (tf.TensorArray without an
// element_shape): any element shape fits it, and the first write fixes it.
struct TensorType {
  DType dtype = DType::Float32;
  Shape shape;
  DType elem_dtype = DType::Float32;
  bool elem_rank_unknown = false;
  // A List whose elements may differ in shape (TensorArray(..., infer_shape = false)): a write
  // joins the element shape with the value's (dims that differ become unknown).
  bool elem_shape_varies = false;

  std::string str() const;  // "f32[2,?]", "list<f32[?]>", "list<f32[*]>"
  // A List whose element shape is not known yet.
  bool is_untyped_list() const { return dtype == DType::List && elem_rank_unknown; }
  friend bool operator==(const TensorType& a, const TensorType& b) {
    return a.dtype == b.dtype && a.shape == b.shape &&
           (a.dtype != DType::List || (a.elem_dtype == b.elem_dtype && a.elem_rank_unknown == b.elem_rank_unknown &&
                                     a.elem_shape_varies == b.elem_shape_varies));
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

}  // namespace ag
