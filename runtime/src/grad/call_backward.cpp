// See call_backward.h.
#include "call_backward.h"

#include <atomic>

#include <fmt/format.h>

#include "../trace/frame.h"
#include "ag/detail/function_core.h"
#include "ag/detail/tape.h"
#include "ag/detail/variable_state.h"
#include "ag/graph/passes.h"
#include "ag/graph/verifier.h"
#include "ag/tensor_spec.h"
#include "split_residuals.h"

namespace ag::detail {
namespace {

std::atomic<uint64_t> g_runs{0}, g_recorded_runs{0};

std::unique_ptr<Executable> compile_graph(Graph g, const std::string& name, std::optional<bool> jit) {
  verify_graph(g);
  auto optimized = std::make_shared<const Graph>(optimize(g));
  CompilerBackend* backend = compiler_backend();
  if (backend && jit.value_or(true)) return backend->compile(optimized, {name, ""});
  return make_interpreter(optimized);
}

}  // namespace

bool differentiable_as_a_call(const Graph& g) {
  for (uint32_t p : g.params)
    if (g.nodes[p].outputs[0].dtype == DType::List) return false;
  for (ValueId r : g.results)
    if (g.type(r).dtype == DType::List) return false;
  // Gradient rules read static shapes: a graph with a value of unknown rank is differentiated op
  // by op on the concrete values.
  if (!first_unknown_rank_value(g).empty()) return false;
  return !has_effects_besides_reads(g);
}

uint64_t call_backward_runs() { return g_runs.load(std::memory_order_relaxed); }
uint64_t call_backward_recorded_runs() { return g_recorded_runs.load(std::memory_order_relaxed); }

std::vector<Tensor> CallBackward::trace_joint(std::span<const Tensor> placeholders,
                                              std::vector<Tensor>* forward_outputs) const {
  const size_t num_inputs = forward_->params.size();
  const std::vector<Tensor> xs(placeholders.begin(), placeholders.begin() + static_cast<std::ptrdiff_t>(num_inputs));
  std::vector<Tensor> dys(forward_->results.size());
  for (size_t i = 0; i < float_outputs_.size(); ++i) dys[float_outputs_[i]] = placeholders[num_inputs + i];
  return replay_gradient(*forward_, xs, dys, wrt_, variables_, forward_outputs);
}

CallBackward::CallBackward(std::shared_ptr<const Graph> forward, const std::string& forward_name, std::optional<bool> jit)
    : forward_(std::move(forward)), variables_(variables_read(*forward_)), sources_(result_sources(*forward_, variables_)) {
  const Graph& g = *forward_;
  FunctionOptions options;
  options.name = forward_name + "_backward";
  options.jit_compile = jit;
  std::vector<ParamLayout> params;
  std::vector<TensorType> types;
  for (size_t i = 0; i < g.params.size(); ++i) {
    const TensorType& t = g.nodes[g.params[i]].outputs[0];
    if (is_floating(t.dtype)) wrt_.push_back(i);
    types.push_back(t);
  }
  for (size_t k = 0; k < g.results.size(); ++k) {
    const TensorType t = g.type(g.results[k]);
    if (!is_floating(t.dtype)) continue;
    float_outputs_.push_back(k);
    types.push_back(t);
  }
  const size_t num_grads = wrt_.size() + variables_.size();

  // The pair: trace the joint graph (x..., dy...) -> (grads..., y...) and split it.
  auto root = std::make_shared<TraceRoot>();
  root->function_name = std::make_shared<const std::string>(options.name);
  TraceFrame frame(nullptr, root, options.name, {});
  {
    FrameScope scope(&frame);
    std::vector<Tensor> placeholders;
    for (size_t i = 0; i < types.size(); ++i) placeholders.push_back(frame.add_param(types[i], fmt::format("p{}", i)));
    std::vector<Tensor> ys;
    const std::vector<Tensor> grads = trace_joint(placeholders, &ys);
    for (const Tensor& t : grads) frame.graph.results.push_back(frame.value_of(t, OpKind::Identity, {}));
    for (const Tensor& t : ys) frame.graph.results.push_back(frame.value_of(t, OpKind::Identity, {}));
  }
  frame.close();
  ForwardBackward pair = split_residuals(frame.graph, g.params.size(), num_grads);
  num_residuals_ = pair.num_residuals;
  forward_exe_ = compile_graph(std::move(pair.forward), forward_name + "_forward", jit);
  backward_exe_ = compile_graph(std::move(pair.backward), options.name, jit);

  // The recorded form, traced only if a tape ever records a backward (higher order).
  for (size_t i = 0; i < types.size(); ++i) {
    options.input_signature.emplace_back(types[i].shape, types[i].dtype);
    params.push_back({ParamLayout::Kind::Tensor, 1});
  }
  auto tracer = [this](std::span<const ArgView>, std::span<const Tensor> placeholders) {
    return trace_joint(placeholders, nullptr);
  };
  FunctionInfo info{options.name, {}};
  recorded_ = make_function_core(std::move(options), std::move(info), std::move(params), num_grads, std::move(tracer));
}

std::vector<Tensor> CallBackward::run_forward(std::span<const Tensor> inputs, std::span<Tensor> outputs) const {
  std::vector<Tensor> all(outputs.size() + num_residuals_);
  forward_exe_->run(inputs, all);
  for (size_t k = 0; k < outputs.size(); ++k) outputs[k] = std::move(all[k]);
  return std::vector<Tensor>(std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(outputs.size())),
                             std::make_move_iterator(all.end()));
}

std::vector<Tensor> CallBackward::grads_of(std::span<Tensor> out, size_t num_inputs, const std::vector<bool>& reached,
                                           std::vector<VariableGrad>& variable_grads) const {
  g_runs.fetch_add(1, std::memory_order_relaxed);
  const SourceSet connected = reached_sources(sources_, reached, num_inputs + variables_.size());
  std::vector<Tensor> grads(num_inputs);
  for (size_t i = 0; i < wrt_.size(); ++i)
    if (connected[wrt_[i]]) grads[wrt_[i]] = out[i];
  for (size_t i = 0; i < variables_.size(); ++i)
    if (connected[num_inputs + i]) variable_grads.push_back({variables_[i].get(), out[wrt_.size() + i]});
  return grads;
}

std::vector<Tensor> CallBackward::run(std::span<const Tensor> inputs, std::span<const Tensor> residuals,
                                      std::span<const Tensor> dys, const std::vector<bool>& reached,
                                      std::vector<VariableGrad>& variable_grads) const {
  std::vector<Tensor> out(wrt_.size() + variables_.size());
  std::vector<Tensor> float_dys;
  for (size_t k : float_outputs_) float_dys.push_back(dys[k]);
  const bool recorded =
      tapes_alive() && (eager_tape_follows(inputs, false) || eager_tape_follows(float_dys, reads_variables()));
  if (recorded) {
    // Another tape records this backward: run it as a Function call, which it records as one op.
    std::vector<ArgView> views;
    auto view = [](const Tensor& t) {
      ArgView v;
      v.ptr = &t;  // kind Tensor
      return v;
    };
    for (const Tensor& x : inputs) views.push_back(view(x));
    for (const Tensor& dy : float_dys) views.push_back(view(dy));
    call_function(*recorded_, views, out);
    g_recorded_runs.fetch_add(1, std::memory_order_relaxed);
    return grads_of(out, inputs.size(), reached, variable_grads);
  }
  std::vector<Tensor> args(residuals.begin(), residuals.end());
  args.insert(args.end(), float_dys.begin(), float_dys.end());
  backward_exe_->run(args, out);
  return grads_of(out, inputs.size(), reached, variable_grads);
}

}  // namespace ag::detail
