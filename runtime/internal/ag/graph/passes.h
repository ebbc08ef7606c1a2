// Graph passes. Each takes a verified graph and returns an equivalent one; sub-graphs of If/While
// are transformed too. optimize() is the straight-line pipeline. Internal: Functions run them;
// ag-opt runs them one by one on graph text (tests/opt/).
#pragma once

#include <functional>
#include <string>

#include "ag/graph/graph.h"

namespace ag {

// Folds away identities: x*1, x-0, integer x+0, cast to the same dtype, reshape to the same
// shape, identity transposes, double negation, selects and Ifs on constant conditions; a
// zeros_like/ones_like of a statically shaped value becomes a Fill that does not read it.
Graph simplify_algebra(const Graph& g);
// Evaluates nodes whose inputs are all constants (results up to 64K elements). A node whose
// evaluation fails is left alone: non-strict execution raises only if it runs.
Graph fold_constants(const Graph& g);
// Untangles the If chains of lowered early returns (`if (c) return a; return b;` traces into two
// Ifs joined by a do_return flag): flag outputs that are Const true/false in the branches become
// the predicate, Ifs on LogicalNot(p) swap their branches, consecutive Ifs on one predicate merge,
// and unused If outputs are dropped. Side effects keep their order.
Graph simplify_conditionals(const Graph& g);
// Merges nodes with the same op, inputs and attributes (never stateful ones).
Graph eliminate_common_subexpressions(const Graph& g);
// Removes nodes whose results are unused; side effects (print, variable assignment) and their
// order are kept. This is TensorFlow's non-strict execution.
Graph prune(const Graph& g);
// Loop-invariant code motion: nodes of a While's cond or body that compute the same value on
// every iteration run once before the loop (a body node only if it cannot raise: the loop may run
// no iteration); inner loops first. Invariant inputs nothing in the loop reads any more go.
Graph hoist_loop_invariants(const Graph& g);
// Re-runs the type rules to make static types as specific as the inputs allow.
Graph infer_shapes(const Graph& g);

// Replaces each ag::custom_gradient node by the outputs it passes through (gradients replay the
// traced graph, which keeps them; nothing runs them).
Graph strip_custom_gradients(const Graph& g);

// enable_check_numerics(): follows every float result of an op that computes
// (detail::checks_numerics_of) by a CheckNumerics node, which the op's readers read instead. What
// a Function compiles (or interprets) while checks are on; ag-opt --pass=check-numerics.
Graph insert_numeric_checks(const Graph& g);

// A sum or mean over one short static axis (2 to 4) of an elementwise expression becomes the sum
// of the expression on each slice: an elementwise value, which its consumer's loop computes in
// registers (k-means' distances fused into their argmin). ag-opt --pass=unroll-short-reductions.
Graph unroll_short_reductions(const Graph& g);

// Grappler's remapper for convolutions: Conv2D -> Add of a per-channel bias -> Relu (or two
// of them) becomes one FusedConv2D, where the convolution's value has no other reader; oneDNN
// adds the bias to each finished sum. ag-opt --pass=fuse-conv-epilogues.
Graph fuse_conv_epilogues(const Graph& g);

// Tensor fusion (Horovod's): small all-reduces of one reduction and dtype that nothing reads in
// between become one all-reduce of a buffer they are packed into, each result sliced out of it.
// The last pass of optimize(); ag-opt --pass=fuse-all-reduces.
Graph fuse_all_reduces(const Graph& g);

// custom gradients -> simplify -> fold -> CSE -> conditionals -> simplify -> prune -> loop
// invariants -> CSE -> infer shapes -> fuse conv epilogues -> unroll short reductions -> fuse
// all-reduces, verifying in between.
// With a non-empty dump_prefix, writes "<prefix>.<NN>-<pass>.graph.txt" after each pass.
Graph optimize(const Graph& g, const std::string& dump_prefix = {});
// The same pipeline, calling `after` with each pass's name ("traced" first, for the input) and
// the graph it produced (the HTML report re-runs it to show every stage).
Graph optimize(const Graph& g, const std::function<void(const char* pass, const Graph& after)>& after);

struct OptimizeOptions {
  // Off for the graph enable_check_numerics() runs: its checks name each op and element as eager
  // execution does, so reductions stay as the user wrote them.
  bool unroll_short_reductions = true;
};
Graph optimize(const Graph& g, const OptimizeOptions& options,
               const std::function<void(const char* pass, const Graph& after)>& after = {});

// True when running the graph has side effects (a stateful node, here or in a sub-graph).
bool has_side_effects(const Graph& g);
// True when running the node has side effects (it is stateful, or one of its sub-graphs has).
bool has_side_effects(const Node& n);
// True when a node of `g` or of its sub-graphs is an `op`.
bool contains_op(const Graph& g, OpKind op);

}  // namespace ag
