// The HTML report page: summary, history, and per concrete function its graph (SVG and node
// table), the graph after each pass with diffs, the fused groups, LLVM IR, assembly; then the
// sources, original beside rewritten.
#include "report_html.h"

#include <fmt/format.h>

#include <map>

#include "ag/detail/ops_internal.h"
#include "ag/graph/printer.h"
#include "graph_svg.h"
#include "html_text.h"
#include "page_assets.h"
#include "sources.h"
#include "text_diff.h"

namespace ag::detail::report {
namespace {

// Graphs larger than this are not drawn (dot would take long and the drawing would not be read).
constexpr size_t kMaxDrawnNodes = 1500;

// Per line of a mapped text, the DOT name of the node it came from ("" when none).
std::vector<std::string> line_keys(const Executable::MappedText& t) {
  std::vector<std::string> keys(t.line_nodes.size());
  for (size_t i = 0; i < t.line_nodes.size(); ++i) {
    const int32_t k = t.line_nodes[i];
    if (k < 0) continue;
    keys[i] = static_cast<size_t>(k) < t.node_keys.size() ? t.node_keys[static_cast<size_t>(k)] : fmt::format("n{}", k);
  }
  return keys;
}

// The lines (from 1) each node produced.
using LinesByNode = std::map<std::string, std::vector<size_t>>;
LinesByNode lines_by_node(const std::vector<std::string>& keys) {
  LinesByNode out;
  for (size_t i = 0; i < keys.size(); ++i)
    if (!keys[i].empty()) out[keys[i]].push_back(i + 1);
  return out;
}

// "12-14, 20 (4 lines)" with each run linked to its first line.
std::string line_links(const LinesByNode& by, const std::string& node, const std::string& id_prefix) {
  const auto it = by.find(node);
  if (it == by.end()) return {};
  const std::vector<size_t>& lines = it->second;
  std::string out;
  size_t runs = 0;
  for (size_t i = 0; i < lines.size();) {
    size_t j = i;
    while (j + 1 < lines.size() && lines[j + 1] == lines[j] + 1) ++j;
    if (runs++ < 6) {
      out += fmt::format("{}<a href=\"#{}-L{}\">{}</a>", out.empty() ? "" : ", ", id_prefix, lines[i],
                         i == j ? fmt::format("{}", lines[i]) : fmt::format("{}&ndash;{}", lines[i], lines[j]));
    }
    i = j + 1;
  }
  if (runs > 6) out += ", &hellip;";
  return out + fmt::format(" <span class=\"note\">({} line{})</span>", lines.size(), lines.size() == 1 ? "" : "s");
}

struct Mapped {
  LinesByNode ir, ir_opt, assembly;
};

// One row per node (sub-graphs after their node, indented), keyed by the node's DOT name.
void node_rows(const Graph& g, const std::string& dot_prefix, int depth, const std::string& sig, const SourceSet& sources,
               const Mapped* mapped, std::string& out) {
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const std::string key = fmt::format("{}n{}", dot_prefix, i);
    std::string type;
    for (size_t k = 0; k < n.outputs.size(); ++k) type += (k ? ", " : "") + n.outputs[k].str();
    std::string src, src_id;
    if (n.loc.known()) {
      const int f = sources.index_of(n.loc.file);
      if (f >= 0) {
        src_id = source_line_id(f, n.loc.line);
        src = fmt::format("<a class=\"src-link\" data-file=\"{}\" data-line=\"{}\" href=\"#{}\">{}</a>",
                          escape(sources.files()[static_cast<size_t>(f)].path), n.loc.line, src_id, escape(n.loc.str()));
      } else {
        src = escape(n.loc.str()) + " <span class=\"note\">(file not found)</span>";
      }
    }
    const bool top = depth == 0;
    out += fmt::format(
        "<tr class=\"ag-row\" id=\"{sig}-row-{key}\" data-src=\"{src_id}\" onclick=\"agHighlight('{sig}','{key}')\">"
        "<td class=\"mono\">{indent}{name}</td><td class=\"mono\">{op} {attrs}</td><td class=\"mono\">{type}</td>"
        "<td>{src}</td><td>{ir}</td><td>{ir_opt}</td><td>{asm_}</td></tr>\n",
        fmt::arg("sig", sig), fmt::arg("key", key), fmt::arg("src_id", src_id),
        fmt::arg("indent", std::string(static_cast<size_t>(depth) * 2, '.')),
        fmt::arg("name", top ? fmt::format("%{}", i) : escape(key)), fmt::arg("op", op_name(n.op)),
        fmt::arg("attrs", escape(attrs_to_text(n))), fmt::arg("type", escape(type)), fmt::arg("src", src),
        fmt::arg("ir", mapped ? line_links(mapped->ir, key, sig + "-ir") : ""),
        fmt::arg("ir_opt", mapped ? line_links(mapped->ir_opt, key, sig + "-iropt") : ""),
        fmt::arg("asm_", mapped ? line_links(mapped->assembly, key, sig + "-asm") : ""));
    for (size_t s = 0; s < n.subgraphs.size(); ++s)
      node_rows(*n.subgraphs[s], fmt::format("{}n{}s{}_", dot_prefix, i, s), depth + 1, sig, sources, mapped, out);
  }
}

std::string graph_section(const ConcreteReport& c, const std::string& sig, const SourceSet& sources,
                          const RenderOptions& options) {
  std::string out = "<h3>Graph</h3>\n";
  const size_t nodes = count_graph_nodes(*c.graph);
  std::string svg, why;
  if (options.dot.empty()) why = "Graphviz (dot) is not installed (not found on PATH): the graph is shown as text and as a table";
  else if (nodes > kMaxDrawnNodes) why = fmt::format("the graph has {} nodes, more than the {} drawn", nodes, kMaxDrawnNodes);
  else svg = run_dot(options.dot, graph_to_dot(*c.graph), why);
  if (!svg.empty()) {
    out += "<div class=\"graph\" data-nodes=\"" + std::to_string(nodes) + "\">" + link_svg_nodes(svg, sig) + "</div>\n";
    out += "<p class=\"note\">Click a node: its row below, its source line, IR and assembly lines light up. "
           "<a href=\"javascript:void(0)\" onclick=\"this.parentNode.previousElementSibling.classList.toggle("
           "'actual-size')\">Fit to the page / actual size</a></p>\n";
  } else {
    out += "<p class=\"note graph-fallback\">No drawing: " + escape(why) + ".</p>\n";
    out += numbered_lines(graph_to_text(*c.graph), sig + "-graph");
  }
  const Mapped mapped{lines_by_node(line_keys(c.ir)), lines_by_node(line_keys(c.ir_opt)),
                      lines_by_node(line_keys(c.assembly))};
  out += "<table class=\"nodes\"><tr><th>node</th><th>op</th><th>type</th><th>source</th><th>IR lines</th>"
         "<th>optimized IR lines</th><th>assembly lines</th></tr>\n";
  node_rows(*c.graph, "", 0, sig, sources, c.backend.empty() ? nullptr : &mapped, out);
  return out + "</table>\n";
}

// The nodes' times in the latest profile (ag::profiler), costliest first, with their lines.
std::string times_section(const ConcreteReport& c, const std::string& sig) {
  if (c.node_times.empty()) return {};
  std::string out = "<h3>Time per node (the latest profile)</h3>\n<table class=\"times\"><tr><th>node</th><th>op</th>"
                    "<th>source</th><th>runs</th><th>total ms</th><th>ms per run</th></tr>\n";
  for (const NodeTime& t : c.node_times) {
    if (t.node >= c.graph->nodes.size()) continue;
    const Node& n = c.graph->nodes[t.node];
    out += fmt::format("<tr><td><a href=\"#{}-row-n{}\">%{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{:.3f}</td><td>{:.4f}</td></tr>\n", sig,
                       t.node, t.node, escape(user_op_name(n.op)), escape(n.loc.str()), t.runs, t.total_ms,
                       t.total_ms / static_cast<double>(std::max<int64_t>(t.runs, 1)));
  }
  return out + "</table>\n";
}

std::string passes_section(const ConcreteReport& c, const std::string& sig) {
  std::string out = "<h3>The graph after each pass</h3>\n";
  for (size_t k = 0; k < c.stages.size(); ++k) {
    const Stage& s = c.stages[k];
    out += fmt::format("<details class=\"stage\" id=\"{}-pass{}\"><summary>{:02} {}</summary>\n", sig, k, k, escape(s.pass));
    if (k == 0) {
      out += numbered_lines(s.text, fmt::format("{}-pass{}", sig, k));
    } else {
      const std::vector<DiffLine> diff = diff_lines(c.stages[k - 1].text, s.text);
      size_t changed = 0;
      for (const DiffLine& d : diff) changed += d.op != ' ';
      out += changed == 0 ? "<p class=\"note\">unchanged by this pass</p>\n"
                          : fmt::format("<p class=\"note\">diff against {:02} {}: {} line(s) changed</p>\n", k - 1,
                                        escape(c.stages[k - 1].pass), changed);
      out += "<pre class=\"code diff\">";
      for (const DiffLine& d : diff)
        out += fmt::format("<span class=\"line{}\">{} {}</span>",
                           d.op == '+' ? " add" : d.op == '-' ? " del" : "", d.op, escape(d.text));
      out += "</pre>\n";
    }
    out += "</details>\n";
  }
  return out;
}

std::string code_section(const ConcreteReport& c, const std::string& sig) {
  std::string out;
  if (c.backend.empty()) return "<h3>Code</h3><p class=\"note no-code\">No code: " + escape(c.not_compiled) + ".</p>\n";
  if (c.ir.text.empty() && c.assembly.text.empty()) {
    out += "<h3>Fused groups, LLVM IR and assembly</h3><p class=\"note no-code\">This concrete function runs on the "
           "graph " + escape(c.backend) + " (jit_compile = false, or no JIT backend linked): it has no fused groups, "
           "LLVM IR or assembly.</p>\n";
    return out;
  }
  auto href = [&](const std::string& key) { return fmt::format("#{}-row-{}", sig, key); };
  out += "<h3>Fused groups (the JIT's plan)</h3>\n";
  out += c.plan_text.empty() ? "<p class=\"note\">The backend printed no plan.</p>\n"
                             : numbered_lines(c.plan_text, sig + "-plan");
  const bool any_mapped = !c.ir.line_nodes.empty() || !c.assembly.line_nodes.empty();
  if (!any_mapped)
    out += "<p class=\"note\">The backend did not map IR or assembly lines to graph nodes.</p>\n";
  out += "<h3>LLVM IR as lowered</h3>\n<details><summary>show</summary>\n" +
         numbered_lines(c.ir.text, sig + "-ir", line_keys(c.ir), href) + "</details>\n";
  out += "<h3>LLVM IR after optimization</h3>\n<details open><summary>show</summary>\n" +
         numbered_lines(c.ir_opt.text, sig + "-iropt", line_keys(c.ir_opt), href) + "</details>\n";
  out += "<h3>Assembly</h3>\n<details open><summary>show</summary>\n" +
         numbered_lines(c.assembly.text, sig + "-asm", line_keys(c.assembly), href) + "</details>\n";
  return out;
}

std::string stats_table(const FunctionStats& s) {
  return fmt::format("<table class=\"stats\"><tr><th>traces</th><th>compiles</th><th>memory hits</th><th>of which "
                     "inline</th><th>disk hits</th><th>interpreted calls</th><th>evictions</th><th>aliases</th></tr>"
                     "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>"
                     "</table>\n",
                     s.traces, s.compiles, s.memory_hits, s.inline_hits, s.disk_hits, s.interpreted_calls, s.evictions,
                     s.aliases);
}

std::string history_table(const std::vector<TraceEvent>& history) {
  if (history.empty()) return "<p class=\"note\">No trace history (a ConcreteFunction's report, or nothing traced).</p>\n";
  std::string out = "<table class=\"history\"><tr><th>event</th><th>signature</th><th>why</th><th>time</th></tr>\n";
  for (const TraceEvent& e : history) {
    const char* what = e.kind == TraceEvent::Kind::Trace     ? "trace"
                       : e.kind == TraceEvent::Kind::Evicted ? "evicted (least recently used)"
                                                             : "evicted by evict()";
    out += fmt::format("<tr><td>{}{}</td><td class=\"sig\">{}</td><td>{}</td><td>{}</td></tr>\n", what,
                       e.kind == TraceEvent::Kind::Trace ? fmt::format(" #{}", e.number) : "", escape(e.signature),
                       escape(e.reason), e.kind == TraceEvent::Kind::Trace ? fmt::format("{:.2f} ms", e.ms) : "");
  }
  return out + "</table>\n";
}

std::string sources_section(const SourceSet& sources) {
  std::string out = "<h2 id=\"sources\">Sources</h2>\n";
  if (sources.files().empty())
    return out + "<p class=\"note\">No source file of these graphs could be read.</p>\n";
  for (size_t f = 0; f < sources.files().size(); ++f) {
    const SourceFile& s = sources.files()[f];
    out += fmt::format("<h3 class=\"mono\">{}</h3>\n<div class=\"side\"><div><p class=\"note\">original</p>\n{}</div>\n",
                       escape(s.path), numbered_lines(s.text, fmt::format("src{}", f)));
    if (s.rewritten_text.empty())
      out += "<div><p class=\"note\">No rewritten copy was registered for this file (it was not built through "
             "ag-rewrite -o, or needed no rewriting).</p></div></div>\n";
    else
      out += fmt::format("<div><p class=\"note\">rewritten by ag-rewrite: {}</p>\n{}</div></div>\n",
                         escape(s.rewritten_path), numbered_lines(s.rewritten_text, fmt::format("rw{}", f)));
  }
  return out;
}

}  // namespace

size_t count_graph_nodes(const Graph& g) {
  size_t n = g.nodes.size();
  for (const Node& node : g.nodes)
    for (const auto& sub : node.subgraphs) n += count_graph_nodes(*sub);
  return n;
}

std::string render_html(const FunctionReport& r, const RenderOptions& options) {
  SourceSet sources;
  for (const ConcreteReport& c : r.concretes) sources.add_files_of(*c.graph);
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>agc report: {name}</title>\n"
      "<style>{style}</style>\n<script>{script}</script>\n</head><body>\n<nav><b>agc</b> &middot; <a "
      "href=\"#summary\">summary</a>",
      fmt::arg("name", escape(r.name)), fmt::arg("style", kPageStyle), fmt::arg("script", kPageScript));
  for (size_t k = 0; k < r.concretes.size(); ++k) out += fmt::format("<a href=\"#s{}\">signature {}</a>", k, k);
  out += "<a href=\"#sources\">sources</a></nav>\n";
  out += fmt::format("<h1>{} <span class=\"note\">{}</span></h1>\n", escape(r.name),
                     r.whole_function ? "Function" : "ConcreteFunction");
  out += "<h2 id=\"summary\">Summary</h2>\n";
  if (r.whole_function) out += stats_table(r.stats);
  out += "<h3>Concrete functions</h3>\n<table class=\"signatures\"><tr><th></th><th>signature</th><th>trace</th>"
         "<th>why it was traced</th><th>runs on</th></tr>\n";
  for (size_t k = 0; k < r.concretes.size(); ++k) {
    const ConcreteReport& c = r.concretes[k];
    out += fmt::format("<tr><td><a href=\"#s{}\">{}</a></td><td class=\"sig\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", k,
                       k, escape(c.signature), c.trace_number ? fmt::format("#{}", c.trace_number) : "",
                       escape(c.reason), c.backend.empty() ? "(not compiled)" : escape(c.backend));
  }
  out += "</table>\n";
  if (r.concretes.empty()) out += "<p class=\"note\">No concrete function: nothing traced yet (or all evicted).</p>\n";
  if (r.whole_function) out += "<h3>Trace history</h3>\n" + history_table(r.history);
  for (size_t k = 0; k < r.concretes.size(); ++k) {
    const ConcreteReport& c = r.concretes[k];
    const std::string sig = fmt::format("s{}", k);
    out += fmt::format("<section class=\"concrete\" id=\"{}\" data-nodes=\"{}\">\n<h2>Signature {}: <span class=\"sig\">{}</span></h2>\n",
                       sig, count_graph_nodes(*c.graph), k, escape(c.signature));
    out += graph_section(c, sig, sources, options);
    out += times_section(c, sig);
    out += passes_section(c, sig);
    out += code_section(c, sig);
    out += "</section>\n";
  }
  out += sources_section(sources);
  return out + "</body></html>\n";
}

}  // namespace ag::detail::report
