// The optimization pipeline, straight-line, with an optional dump after each pass.
#include <fmt/format.h>

#include <fstream>

#include "ag/detail/log.h"
#include "ag/graph/passes.h"
#include "ag/graph/printer.h"
#include "ag/graph/verifier.h"

namespace ag {
namespace {

size_t count_nodes(const Graph& g) {
  size_t n = g.nodes.size();
  for (const Node& node : g.nodes)
    for (const auto& sub : node.subgraphs) n += count_nodes(*sub);
  return n;
}

}  // namespace

Graph optimize(const Graph& input, const std::function<void(const char* pass, const Graph& after)>& observe) {
  return optimize(input, OptimizeOptions{}, observe);
}

Graph optimize(const Graph& input, const OptimizeOptions& options,
               const std::function<void(const char* pass, const Graph& after)>& observe) {
  auto after = [&](const char* pass, const Graph& g) {
    verify_graph(g);
    if (observe) observe(pass, g);
    if (detail::log_enabled(detail::LogTopic::Passes))
      detail::log_line(fmt::format("agc: {}: after {}: {} nodes", g.name, pass, count_nodes(g)));
  };
  after("traced", input);
  Graph g = strip_custom_gradients(input);
  g = simplify_algebra(g);
  after("simplify", g);
  g = fold_constants(g);
  after("fold", g);
  g = eliminate_common_subexpressions(g);
  after("cse", g);
  g = simplify_conditionals(g);
  after("conditionals", g);
  g = simplify_algebra(g);
  after("simplify", g);
  g = prune(g);
  after("prune", g);
  g = hoist_loop_invariants(g);
  after("licm", g);
  // Hoisted nodes may repeat ones already before the loop.
  g = eliminate_common_subexpressions(g);
  after("cse", g);
  g = infer_shapes(g);
  after("infer-shapes", g);
  // These three need the static shapes infer_shapes found. Each is a stage only where it changed
  // something, so the dumps and reports of other graphs keep their stages. The expressions a
  // reduction was unrolled from are left unread: prune drops them.
  if (Graph fused = fuse_conv_epilogues(g); count_nodes(fused) != count_nodes(g)) {
    g = std::move(fused);
    after("fuse-conv-epilogues", g);
  }
  if (Graph unrolled = options.unroll_short_reductions ? unroll_short_reductions(g) : g;
      count_nodes(unrolled) != count_nodes(g)) {
    g = prune(unrolled);
    after("unroll-short-reductions", g);
  }
  if (Graph fused = fuse_all_reduces(g); count_nodes(fused) != count_nodes(g)) {
    g = std::move(fused);
    after("fuse-all-reduces", g);
  }
  return g;
}

Graph optimize(const Graph& input, const std::string& dump_prefix) {
  if (dump_prefix.empty()) return optimize(input, std::function<void(const char*, const Graph&)>());
  int step = 0;
  return optimize(input, [&](const char* pass, const Graph& g) {
    std::ofstream(fmt::format("{}.{:02}-{}.graph.txt", dump_prefix, step++, pass)) << graph_to_text(g);
  });
}

}  // namespace ag
