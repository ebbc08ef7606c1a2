// The graph interpreter: executes nodes in order with the eager kernels. A value is released
// after its last use, so buffers return to the allocator (and TensorArrays can be updated in
// place) while the graph is still running.
#include <atomic>
#include <unordered_map>
#include <fmt/format.h>

#include "ag/backend.h"
#include "ag/detail/ops_internal.h"

namespace ag {
namespace {

// Per graph: for each node, the values whose last read is that node.
struct Plan {
  std::vector<std::vector<ValueId>> release_after;
  std::vector<std::vector<bool>> is_result;
};

Plan make_plan(const Graph& g) {
  Plan p;
  p.release_after.resize(g.nodes.size());
  std::vector<std::vector<int64_t>> last(g.nodes.size());
  for (uint32_t i = 0; i < g.nodes.size(); ++i) last[i].assign(g.nodes[i].outputs.size(), -1);
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    for (ValueId v : g.nodes[i].inputs) last[v.node][v.index] = i;
  p.is_result.resize(g.nodes.size());
  for (uint32_t i = 0; i < g.nodes.size(); ++i) p.is_result[i].assign(g.nodes[i].outputs.size(), false);
  for (ValueId r : g.results) p.is_result[r.node][r.index] = true;
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    for (uint32_t k = 0; k < last[i].size(); ++k)
      if (last[i][k] >= 0 && !p.is_result[i][k]) p.release_after[last[i][k]].push_back({i, k});
  return p;
}

// Plans for a graph and all its sub-graphs, owned by whoever holds the graph.
struct Plans {
  std::unordered_map<const Graph*, Plan> map;
  void add(const Graph& g) {
    map.emplace(&g, make_plan(g));
    for (const Node& n : g.nodes)
      for (const auto& sub : n.subgraphs) add(*sub);
  }
};

bool truth(const Tensor& t) { return *static_cast<const bool*>(t.impl()->data); }

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

void run_graph(const Graph& g, const Plans& plans, std::span<const Tensor> inputs, std::span<Tensor> outputs) {
  if (inputs.size() != g.params.size())
    throw InternalError(fmt::format("interpreter: {} inputs for {} params", inputs.size(), g.params.size()));
  const Plan* plan = &plans.map.at(&g);
  std::vector<std::vector<Tensor>> values(g.nodes.size());
  for (size_t i = 0; i < g.params.size(); ++i) values[g.params[i]] = {inputs[i]};
  std::vector<Tensor> in;
  for (uint32_t id = 0; id < g.nodes.size(); ++id) {
    const Node& n = g.nodes[id];
    if (n.op == OpKind::Placeholder) continue;
    in.clear();
    for (ValueId v : n.inputs) in.push_back(values[v.node][v.index]);
    // Release dead values before running, so a unique TensorArray can be updated in place.
    for (ValueId v : plan->release_after[id]) values[v.node][v.index] = Tensor();
    switch (n.op) {
      case OpKind::If: {
        const Graph& branch = *n.subgraphs[truth(in[0]) ? 0 : 1];
        values[id].resize(n.outputs.size());
        std::span<const Tensor> operands(in.data() + 1, in.size() - 1);
        run_graph(branch, plans, operands, values[id]);
        break;
      }
      case OpKind::While: {
        const Graph& cond = *n.subgraphs[0];
        const Graph& body = *n.subgraphs[1];
        const size_t nvars = static_cast<size_t>(n.attrs.axis);
        std::vector<Tensor> state = in;  // loop vars then invariants
        std::vector<Tensor> c(1), next(nvars);
        for (;;) {
          run_graph(cond, plans, state, c);
          if (!truth(c[0])) break;
          run_graph(body, plans, state, next);
          for (size_t k = 0; k < nvars; ++k) state[k] = std::move(next[k]);
        }
        state.resize(nvars);
        values[id] = std::move(state);
        break;
      }
      case OpKind::Print: run_op(n, in); break;
      default: values[id] = {run_op(n, in)};
    }
  }
  for (size_t i = 0; i < g.results.size(); ++i) outputs[i] = values[g.results[i].node][g.results[i].index];
}

class InterpreterExecutable final : public Executable {
 public:
  explicit InterpreterExecutable(std::shared_ptr<const Graph> g) : graph_(std::move(g)) { plans_.add(*graph_); }
  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    run_graph(*graph_, plans_, inputs, outputs);
  }
  std::string_view backend_name() const override { return "interpreter"; }

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

namespace {
std::atomic<CompilerBackend*> g_backend{nullptr};
}
void set_compiler_backend(CompilerBackend* backend) { g_backend.store(backend, std::memory_order_release); }
CompilerBackend* compiler_backend() { return g_backend.load(std::memory_order_acquire); }

}  // namespace ag
