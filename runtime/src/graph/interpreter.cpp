// The graph interpreter: executes nodes in order with the eager kernels. A value is released
// after its last use, so buffers return to the allocator (and TensorArrays can be updated in
// place) while the graph is still running.
#include <unordered_map>
#include <fmt/format.h>

#include "ag/backend.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/profiler.h"
#include "ag/detail/tensor_buffer.h"

namespace ag {
namespace {

// Per graph: where each value lives in a flat slot array, and which slots die after each node.
struct Plan {
  std::vector<uint32_t> slot_base;               // first slot of each node's outputs
  uint32_t num_slots = 0;
  std::vector<std::vector<uint32_t>> release_after;  // slots whose last read is that node
};

Plan make_plan(const Graph& g) {
  Plan p;
  p.slot_base.resize(g.nodes.size());
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    p.slot_base[i] = p.num_slots;
    p.num_slots += static_cast<uint32_t>(g.nodes[i].outputs.size());
  }
  std::vector<int64_t> last(p.num_slots, -1);
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    for (ValueId v : g.nodes[i].inputs) last[p.slot_base[v.node] + v.index] = i;
  for (ValueId r : g.results) last[p.slot_base[r.node] + r.index] = -1;  // results live to the end
  p.release_after.resize(g.nodes.size());
  for (uint32_t s = 0; s < p.num_slots; ++s)
    if (last[s] >= 0) p.release_after[last[s]].push_back(s);
  return p;
}

// Plans for a graph and all its sub-graphs, owned by whoever holds the graph.
struct Plans {
  std::unordered_map<const Graph*, Plan> map;
  const Plan* root_graph = nullptr;
  const Graph* root_plan_of = nullptr;
  // The root graph's plan without a hash lookup: it is used on every call.
  const Plan& of(const Graph& g) const { return &g == root_plan_of ? *root_graph : map.at(&g); }
  void add_root(const Graph& g) {
    add(g);
    root_plan_of = &g;
    root_graph = &map.at(&g);
  }
  void add(const Graph& g) {
    map.emplace(&g, make_plan(g));
    for (const Node& n : g.nodes)
      for (const auto& sub : n.subgraphs) add(*sub);
  }
};

bool truth(const Tensor& t) { return *static_cast<const bool*>(detail::impl_of(t)->data); }

// Runs one op. Static types were checked while tracing, so a dtype or shape error now comes
// from run-time data (a dynamic dim): it is an InvalidArgumentError, like every data error.
Tensor run_op(const Node& n, std::span<const Tensor> in) {
  try {
    return detail::eval_op(n.op, in, n.attrs, n.loc);
  } catch (const InvalidArgumentError&) {
    throw;
  } catch (const ValueError& e) {
    throw InvalidArgumentError(e.what());
  } catch (const TypeError& e) {
    throw InvalidArgumentError(e.what());
  }
}

// Values of small graphs live on the stack: the cached-call path allocates only its outputs.
constexpr size_t kInlineSlots = 32;
constexpr size_t kInlineInputs = 8;

void run_graph(const Graph& g, const Plans& plans, std::span<const Tensor> inputs, std::span<Tensor> outputs) {
  if (inputs.size() != g.params.size())
    throw InternalError(fmt::format("interpreter: {} inputs for {} params", inputs.size(), g.params.size()));
  const Plan& plan = plans.of(g);
  detail::TensorBuffer<kInlineSlots> slot_buffer(plan.num_slots);
  Tensor* slots = slot_buffer.data();
  auto slot = [&](ValueId v) -> Tensor& { return slots[plan.slot_base[v.node] + v.index]; };
  for (size_t i = 0; i < g.params.size(); ++i) slots[plan.slot_base[g.params[i]]] = inputs[i];
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (n.op == OpKind::Placeholder) continue;
    detail::TensorBuffer<kInlineInputs> in_buffer(n.inputs.size());
    Tensor* in = in_buffer.data();
    for (size_t k = 0; k < n.inputs.size(); ++k) in[k] = slot(n.inputs[k]);
    // Release dead values before running, so a unique TensorArray can be updated in place.
    for (uint32_t s : plan.release_after[id]) slots[s] = Tensor();
    const std::span<const Tensor> args(in, n.inputs.size());
    Tensor* out = slots + plan.slot_base[id];
    // Profiling: an event per node, and its time for the report (whole loops and branches too).
    const detail::ProfileClock::time_point began = detail::profiling() ? detail::ProfileClock::now() : detail::ProfileClock::time_point{};
    struct Report {
      const Graph& g;
      uint32_t id;
      detail::ProfileClock::time_point began;
      ~Report() {
        if (began == detail::ProfileClock::time_point{}) return;
        const auto now = detail::ProfileClock::now();
        const Node& n = g.nodes[id];
        detail::profile_event("op", detail::user_op_name(n.op), began, now, n.loc);
        detail::profile_node_time(&g, id, now - began);
      }
    } report{g, id, began};
    switch (n.op) {
      case OpKind::If: {
        const Graph& branch = *n.subgraphs[truth(args[0]) ? 0 : 1];
        run_graph(branch, plans, args.subspan(1), std::span<Tensor>(out, n.outputs.size()));
        break;
      }
      case OpKind::While: {
        const Graph& cond = *n.subgraphs[0];
        const Graph& body = *n.subgraphs[1];
        const size_t nvars = static_cast<size_t>(n.attrs.loop_vars());
        std::vector<Tensor> state(args.begin(), args.end());  // loop vars then invariants
        std::vector<Tensor> c(1), next(nvars);
        for (;;) {
          run_graph(cond, plans, state, c);
          if (!truth(c[0])) break;
          run_graph(body, plans, state, next);
          for (size_t k = 0; k < nvars; ++k) state[k] = std::move(next[k]);
        }
        for (size_t k = 0; k < nvars; ++k) out[k] = std::move(state[k]);
        break;
      }
      case OpKind::Print:
      case OpKind::Assert: run_op(n, args); break;  // no outputs
      default: out[0] = run_op(n, args);
    }
  }
  for (size_t i = 0; i < g.results.size(); ++i) outputs[i] = slot(g.results[i]);
}

class InterpreterExecutable final : public Executable {
 public:
  explicit InterpreterExecutable(std::shared_ptr<const Graph> g) : graph_(std::move(g)) { plans_.add_root(*graph_); }
  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    run_graph(*graph_, plans_, inputs, outputs);
  }
  std::string_view backend_name() const override { return "interpreter"; }
  std::unique_ptr<Executable> rebound(std::shared_ptr<const Graph> graph) const override {
    return std::make_unique<InterpreterExecutable>(std::move(graph));
  }

 private:
  std::shared_ptr<const Graph> graph_;
  Plans plans_;
};

}  // namespace

std::unique_ptr<Executable> make_interpreter(std::shared_ptr<const Graph> graph) {
  return std::make_unique<InterpreterExecutable>(std::move(graph));
}

std::vector<Tensor> interpret(const Graph& graph, std::span<const Tensor> inputs) {
  Plans plans;
  plans.add(graph);
  std::vector<Tensor> out(graph.results.size());
  run_graph(graph, plans, inputs, out);
  return out;
}

}  // namespace ag
