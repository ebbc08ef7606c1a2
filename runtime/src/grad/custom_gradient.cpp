// ag::custom_gradient's runtime side (ag/custom_gradient.h). Eagerly a call is one tape entry
// whose backward calls the user's gradient function. While tracing it is a CustomGradient node:
// the gradient function is traced into its sub-graph (dy in, the gradients out, whatever else it
// reads captured as the node's inputs), so every consumer of the traced graph — a tape inside
// the trace, a Function called under an eager tape (its backward replays the traced graph), the
// gradient of a staged loop — differentiates it by replaying that sub-graph (grad_custom), and
// outer tapes record that replay (higher order). optimize() strips the node before any backend.
#include <fmt/format.h>

#include "../trace/frame.h"
#include "ag/construct.h"
#include "ag/custom_gradient.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/tape.h"
#include "ag/detail/variable_state.h"
#include "tape_state.h"

namespace ag::detail {

struct CustomGradientForward::State {
  std::vector<std::pair<TapeState*, bool>> paused;
  std::vector<std::shared_ptr<VariableState>> reads;
  std::vector<std::shared_ptr<VariableState>>* outer_reads = nullptr;
  bool finished = false;
};

CustomGradientForward::CustomGradientForward(bool pause_tapes) : state_(std::make_unique<State>()) {
  if (pause_tapes)
    for (TapeState* tape : TapeState::live()) {
      state_->paused.emplace_back(tape, tape->recording);
      tape->recording = false;
    }
  state_->outer_reads = std::exchange(t_variable_reads, &state_->reads);
}

CustomGradientForward::~CustomGradientForward() { finish(); }

std::vector<Variable> CustomGradientForward::finish() {
  if (!state_->finished) {
    state_->finished = true;
    for (auto [tape, was] : state_->paused) tape->recording = was;
    t_variable_reads = state_->outer_reads;
    // A custom gradient inside another one's forward: the outer one read these too.
    if (t_variable_reads) t_variable_reads->insert(t_variable_reads->end(), state_->reads.begin(), state_->reads.end());
  }
  std::vector<Variable> out;
  for (const auto& v : state_->reads) {
    if (!is_floating(v->dtype)) continue;
    if (std::none_of(out.begin(), out.end(), [&](const Variable& w) { return w.state() == v; }))
      out.push_back(Variable::from_state(v));
  }
  return out;
}

void throw_custom_gradient_needs_variables(const std::vector<Variable>& read, SourceLoc loc) {
  throw TypeError(fmt::format(
      "ag::custom_gradient{}: the function reads Variable {}, so its gradient function must also take "
      "`const std::vector<ag::Variable>& variables` and return std::pair{{the parameters' gradients, the Variables' "
      "gradients}} (TensorFlow's `variables=` argument)",
      at(loc), read.front().state()->describe()));
}

namespace {

// The gradient function's results, checked against the inputs (x..., Variable reads...).
std::vector<Tensor> checked(std::vector<Tensor> grads, std::span<const Tensor> inputs, SourceLoc loc) {
  if (grads.size() != inputs.size())
    throw ValueError(fmt::format("ag::custom_gradient{}: the gradient function returned {} gradient(s) for {} "
                                 "input(s) (one per tensor parameter, then one per Variable read)",
                                 at(loc), grads.size(), inputs.size()));
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].has_value()) continue;
    const Tensor& x = inputs[i];
    if (grads[i].dtype() != x.dtype() || !grads[i].shape().is_compatible_with(x.shape()))
      throw ValueError(fmt::format("ag::custom_gradient{}: the gradient of input {} is {}{}, the input is {}{}", at(loc), i,
                                   dtype_name(grads[i].dtype()), grads[i].shape().str(), dtype_name(x.dtype()),
                                   x.shape().str()));
  }
  return grads;
}

// The node: (x..., y..., reads..., captures...) -> y', its sub-graph (dy..., captures...) ->
// the gradients that have a value; attrs.ints = {#x, #y, #reads, then 1/0 per x and read}.
std::vector<Tensor> record_in_graph(const CustomGradientCall& call, const std::vector<Tensor>& reads) {
  std::vector<Tensor> differentiated = call.inputs;
  differentiated.insert(differentiated.end(), reads.begin(), reads.end());
  TraceFrame* outer = current_frame();
  TraceFrame frame(outer, outer->root, "custom_gradient", call.loc);
  Attrs attrs;
  attrs.ints = Shape{static_cast<int64_t>(call.inputs.size()), static_cast<int64_t>(call.outputs.size()),
                     static_cast<int64_t>(reads.size())};
  std::vector<TensorType> types;
  {
    FrameScope scope(&frame);
    std::vector<Tensor> dys;
    for (size_t k = 0; k < call.outputs.size(); ++k) {
      types.push_back(type_of(call.outputs[k]));
      dys.push_back(frame.add_param(types.back(), fmt::format("dy{}", k)));
    }
    const std::vector<Tensor> grads = checked(call.grad(dys), differentiated, call.loc);
    for (const Tensor& g : grads) {
      attrs.ints.push_back(g.has_value());
      if (g.has_value()) frame.graph.results.push_back(frame.value_of(g, OpKind::CustomGradient, call.loc));
    }
  }
  std::vector<Tensor> inputs = differentiated;
  inputs.insert(inputs.begin() + static_cast<std::ptrdiff_t>(call.inputs.size()), call.outputs.begin(), call.outputs.end());
  for (const Capture& c : frame.captures()) inputs.push_back(c.outer);
  auto graph = std::make_shared<const Graph>(std::move(frame.graph));
  frame.close();
  return trace_node(OpKind::CustomGradient, inputs, std::move(attrs), std::move(types), {graph}, call.loc);
}

}  // namespace

std::vector<Tensor> record_custom_gradient(CustomGradientCall call) {
  // Fresh reads of the Variables the forward read (the tapes record them as reads): their
  // gradients reach the Variables through these inputs.
  std::vector<Tensor> reads;
  for (const Variable& v : call.variables) reads.push_back(v.value());
  auto symbolic = [](const std::vector<Tensor>& ts) { return std::any_of(ts.begin(), ts.end(), [](const Tensor& t) { return t.is_symbolic(); }); };
  if (is_tracing() && (symbolic(call.inputs) || symbolic(call.outputs) || symbolic(reads))) return record_in_graph(call, reads);
  if (!tapes_alive()) return call.outputs;
  // Eagerly: fresh identities for the outputs (the forward may give back an input), one entry.
  std::vector<Tensor> outputs;
  for (const Tensor& y : call.outputs) outputs.push_back(alias_of(y));
  std::vector<Tensor> differentiated = call.inputs;
  differentiated.insert(differentiated.end(), reads.begin(), reads.end());
  auto grad = std::make_shared<const CustomGradFn>(
      [fn = std::move(call.grad), differentiated, loc = call.loc](std::span<const Tensor> dys) {
        return checked(fn(dys), differentiated, loc);
      });
  tape_record_custom(differentiated, outputs, std::move(grad));
  return outputs;
}

// The gradient of a CustomGradient node: its sub-graph replayed on the upstream gradients.
std::vector<Tensor> grad_custom(const GradContext& c) {
  const Shape& counts = c.attrs.ints;
  const size_t nx = static_cast<size_t>(counts[0]), ny = static_cast<size_t>(counts[1]), nv = static_cast<size_t>(counts[2]);
  std::vector<Tensor> args;
  for (size_t k = 0; k < ny; ++k) args.push_back(c.dys[k].has_value() ? c.dys[k] : zeros_like(c.outputs[k]));
  args.insert(args.end(), c.inputs.begin() + static_cast<std::ptrdiff_t>(nx + ny + nv), c.inputs.end());
  const Graph& g = *c.subgraphs[0];
  std::vector<Tensor> grads(g.results.size());
  replay_graph(g, args, grads);
  std::vector<Tensor> result(c.inputs.size());
  size_t k = 0;
  for (size_t i = 0; i < nx + nv; ++i)
    if (counts[3 + static_cast<int64_t>(i)]) result[i < nx ? i : ny + i] = grads[k++];
  return result;
}

}  // namespace ag::detail
