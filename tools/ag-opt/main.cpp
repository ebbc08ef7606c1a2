// ag-opt: runs graph passes over graph text and prints the result, or what the JIT makes of it
// (its fused plan, LLVM IR, assembly): LLVM's `opt` and MLIR's `mlir-opt`, for agc's graphs.
// The golden tests of tests/opt/ drive it through FileCheck; a developer reproduces a pass or a
// lowering from a dump (AG_DUMP, ag-emit --emit=traced) without the program that traced it.
#include <ag/ag.h>
#include <ag/backend.h>
#include <ag/graph/parser.h>
#include <ag/graph/printer.h>
#include <ag/graph/verifier.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "ag/graph/passes.h"

namespace {

constexpr const char* kUsage = R"(usage: ag-opt [--pass=<name>[,<name>...]]... [--emit=<stage>] <file.graph | ->
       ag-opt --emit=op-table       (the op reference, docs/ops.md, from the op table)

Reads every graph in the file (graph_to_text's form; `//` lines are comments), runs the passes
in order, verifying after each, and prints the result.

  --pass     simplify, fold, cse, conditionals, prune, infer-shapes, strip-custom-gradients,
             licm, check-numerics, unroll-short-reductions, fuse-all-reduces; or optimize (the whole
             pipeline, as a Function runs it)
  --emit     graph (default): the graph after the passes
             passes: the graph after each pass, under "// ---- <pass>" lines
             plan, ir, ir-opt, asm: compiled by the JIT (its fused plan; LLVM IR as lowered
             and after optimization; assembly). AG_JIT_CPU and the other AG_* variables apply.
)";

using Pass = ag::Graph (*)(const ag::Graph&);

struct NamedPass {
  const char* name;
  Pass run;
};

ag::Graph whole_pipeline(const ag::Graph& g) { return ag::optimize(g); }

constexpr NamedPass kPasses[] = {
    {"simplify", ag::simplify_algebra},
    {"fold", ag::fold_constants},
    {"cse", ag::eliminate_common_subexpressions},
    {"conditionals", ag::simplify_conditionals},
    {"prune", ag::prune},
    {"infer-shapes", ag::infer_shapes},
    {"strip-custom-gradients", ag::strip_custom_gradients},
    {"licm", ag::hoist_loop_invariants},
    {"check-numerics", ag::insert_numeric_checks},
    {"unroll-short-reductions", ag::unroll_short_reductions},
    {"fuse-conv-epilogues", ag::fuse_conv_epilogues},
    {"fuse-all-reduces", ag::fuse_all_reduces},
    {"optimize", whole_pipeline},
};

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "ag-opt: error: " << what << "\n\n" << kUsage;
  std::exit(2);
}

const NamedPass& pass_named(const std::string& name) {
  for (const NamedPass& p : kPasses)
    if (name == p.name) return p;
  usage_error("unknown pass '" + name + "'");
}

std::string read_input(const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), {});
  std::ifstream in(path);
  if (!in) {
    std::cerr << "ag-opt: error: cannot read '" << path << "'\n";
    std::exit(1);
  }
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string compiled(const ag::Graph& g, const std::string& stage) {
  ag::CompilerBackend* backend = ag::compiler_backend();
  if (!backend) throw ag::UnimplementedError("--emit=" + stage + " needs the JIT, and this ag-opt has none");
  ag::CompileOptions options;
  options.name = g.name;
  const auto exe = backend->compile(std::make_shared<const ag::Graph>(g), options);
  if (stage == "plan") return exe->plan_text();
  if (stage == "ir") return exe->llvm_ir(false);
  if (stage == "ir-opt") return exe->llvm_ir(true);
  return exe->assembly();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<const NamedPass*> passes;
  std::string stage = "graph", input;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    }
    if (arg.starts_with("--pass=")) {
      std::stringstream names(arg.substr(7));
      for (std::string name; std::getline(names, name, ',');) passes.push_back(&pass_named(name));
    } else if (arg == "--emit=op-table") {
      const std::string page = ag::op_reference_markdown();
      std::fwrite(page.data(), 1, page.size(), stdout);
      return 0;
    } else if (arg.starts_with("--emit=")) {
      stage = arg.substr(7);
      if (stage != "graph" && stage != "passes" && stage != "plan" && stage != "ir" && stage != "ir-opt" && stage != "asm")
        usage_error("unknown stage '" + stage + "'");
    } else if (!input.empty() || (arg.starts_with("-") && arg != "-")) {
      usage_error("unexpected argument '" + arg + "'");
    } else {
      input = arg;
    }
  }
  if (input.empty()) usage_error("no input file");
  try {
    std::string out;
    for (ag::Graph g : ag::graphs_from_text(read_input(input))) {
      if (stage == "passes") out += "// ---- input\n" + ag::graph_to_text(g, ag::ConstantText::Full);
      for (const NamedPass* p : passes) {
        g = p->run(g);
        ag::verify_graph(g);
        if (stage == "passes") out += std::string("// ---- ") + p->name + "\n" + ag::graph_to_text(g, ag::ConstantText::Full);
      }
      if (stage == "graph") out += ag::graph_to_text(g, ag::ConstantText::Full);
      else if (stage != "passes") out += compiled(g, stage);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  } catch (const ag::Error& e) {
    std::cerr << "ag-opt: error: " << e.what() << "\n";
    return 1;
  } catch (const ag::InternalError& e) {
    std::cerr << "ag-opt: internal error (an agc bug): " << e.what() << "\n";
    return 3;
  }
}
