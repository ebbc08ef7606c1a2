// See call_backward.h.
#include "call_backward.h"

#include <atomic>

#include "ag/detail/function_core.h"
#include "ag/detail/variable_state.h"
#include "ag/tensor_spec.h"

namespace ag::detail {
namespace {

std::atomic<uint64_t> g_runs{0};

bool effects_other_than_reads(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (op_info(n.op).stateful && n.op != OpKind::ReadVariable && op_class(n.op) != OpClass::Control) return true;
    for (const auto& sub : n.subgraphs)
      if (effects_other_than_reads(*sub)) return true;
  }
  return false;
}

}  // namespace

bool differentiable_as_a_call(const Graph& g) {
  for (uint32_t p : g.params)
    if (g.nodes[p].outputs[0].dtype == DType::List) return false;
  for (ValueId r : g.results)
    if (g.type(r).dtype == DType::List) return false;
  return !effects_other_than_reads(g);
}

uint64_t call_backward_runs() { return g_runs.load(std::memory_order_relaxed); }

CallBackward::CallBackward(std::shared_ptr<const Graph> forward, const std::string& forward_name, std::optional<bool> jit)
    : forward_(std::move(forward)), variables_(variables_read(*forward_)) {
  const Graph& g = *forward_;
  FunctionOptions options;
  options.name = forward_name + "_backward";
  options.jit_compile = jit;
  // One trace serves every call of the forward's signature (also its unknown dims).
  std::vector<ParamLayout> params;
  for (size_t i = 0; i < g.params.size(); ++i) {
    const TensorType& t = g.nodes[g.params[i]].outputs[0];
    if (is_floating(t.dtype)) wrt_.push_back(i);
    options.input_signature.emplace_back(t.shape, t.dtype);
    params.push_back({ParamLayout::Kind::Tensor, 1});
  }
  for (size_t k = 0; k < g.results.size(); ++k) {
    const TensorType t = g.type(g.results[k]);
    if (!is_floating(t.dtype)) continue;
    float_outputs_.push_back(k);
    options.input_signature.emplace_back(t.shape, t.dtype);
    params.push_back({ParamLayout::Kind::Tensor, 1});
  }
  const size_t num_inputs = g.params.size();
  auto tracer = [this, num_inputs](std::span<const ArgView>, std::span<const Tensor> placeholders) {
    const std::vector<Tensor> xs(placeholders.begin(), placeholders.begin() + static_cast<std::ptrdiff_t>(num_inputs));
    std::vector<Tensor> dys(forward_->results.size());
    for (size_t i = 0; i < float_outputs_.size(); ++i) dys[float_outputs_[i]] = placeholders[num_inputs + i];
    return replay_gradient(*forward_, xs, dys, wrt_, variables_);
  };
  FunctionInfo info{options.name, {}};
  core_ = make_function_core(std::move(options), std::move(info), std::move(params), wrt_.size() + variables_.size(),
                             std::move(tracer));
}

std::vector<Tensor> CallBackward::run(std::span<const Tensor> inputs, std::span<const Tensor> dys,
                                      std::vector<VariableGrad>& variable_grads) const {
  std::vector<ArgView> views;
  for (const Tensor& x : inputs) views.push_back({ArgKind::Tensor, ArgKind::Tensor, false, &x});
  for (size_t k : float_outputs_) views.push_back({ArgKind::Tensor, ArgKind::Tensor, false, &dys[k]});
  std::vector<Tensor> out(wrt_.size() + variables_.size());
  call_function(*core_, views, out);
  g_runs.fetch_add(1, std::memory_order_relaxed);
  std::vector<Tensor> grads(inputs.size());
  for (size_t i = 0; i < wrt_.size(); ++i) grads[wrt_[i]] = out[i];
  for (size_t i = 0; i < variables_.size(); ++i) variable_grads.push_back({variables_[i].get(), out[wrt_.size() + i]});
  return grads;
}

}  // namespace ag::detail
