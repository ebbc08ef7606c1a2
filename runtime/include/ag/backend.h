// The seam between the runtime and code generators. The runtime runs graphs with its
// interpreter; the JIT (libag_jit) registers a CompilerBackend that turns a graph into
// machine code. The runtime never includes an LLVM header.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ag/detail/arg_view.h"
#include "ag/graph/graph.h"
#include "ag/tensor.h"

namespace ag {

// A runnable concrete function. run() is reentrant: several threads may call it at once.
class Executable {
 public:
  virtual ~Executable() = default;
  // `inputs`: one concrete tensor per graph parameter; `outputs`: one per graph result.
  virtual void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) const = 0;
  // run() for a call whose every argument is one Tensor, given as the call's views (in order):
  // the cached call's path, which a backend may serve without gathering the inputs first. The
  // default gathers them and calls run().
  virtual void run_tensor_args(std::span<const detail::ArgView> args, std::span<Tensor> outputs) const;
  // Inspection; empty for backends without machine code.
  virtual std::string llvm_ir(bool optimized) const {
    (void)optimized;
    return {};
  }
  virtual std::string assembly() const { return {}; }
  // The backend's plan printed on the graph (the JIT: each value's storage and fused group), as
  // text and as Graphviz DOT; empty for backends without one.
  virtual std::string plan_text() const { return {}; }
  virtual std::string plan_dot() const { return {}; }
  // llvm_ir(optimized) and assembly() with, per line, the graph node whose lowering produced it.
  // The default maps no line; what a backend maps is its choice (the JIT: see docs/inspection.md,
  // "The HTML report").
  struct MappedText {
    std::string text;
    std::vector<int32_t> line_nodes;     // empty, or per line of text an index into node_keys (-1: none)
    std::vector<std::string> node_keys;  // graph_to_dot's node names: "n3", "n3s1_n2" (in a sub-graph)
  };
  virtual MappedText llvm_ir_mapped(bool optimized) const { return {llvm_ir(optimized), {}, {}}; }
  virtual MappedText assembly_mapped() const { return {assembly(), {}, {}}; }
  // The temporaries the code allocates per call (MemoryAnalysis::temp_bytes and
  // runtime_sized_temporaries); {-1, 0} for backends that do not plan them.
  virtual std::pair<int64_t, int64_t> temporaries() const { return {-1, 0}; }
  // True when the code was loaded from the on-disk cache without code generation.
  virtual bool loaded_from_disk() const { return false; }
  virtual std::string_view backend_name() const = 0;
  // This executable's code running `graph`, a copy of its graph bound to other Variables of the
  // same dtypes and shapes (a Variable argument is an input of a concrete function, not part of
  // its code); null when the backend must compile `graph` anew.
  virtual std::unique_ptr<Executable> rebound(std::shared_ptr<const Graph> graph) const {
    (void)graph;
    return nullptr;
  }
};

struct CompileOptions {
  std::string name;           // the Function's name, for symbols, logs and dump files
  std::string dump_prefix;    // "<dir>/<name>.<sig>" when AG_DUMP is set, else empty
  bool background = false;    // tiered execution's background compile: use the calling thread only
};

class CompilerBackend {
 public:
  virtual ~CompilerBackend() = default;
  virtual std::string_view name() const = 0;
  // The CPU the generated code targets ("znver2", "x86-64-v3"): ag::jit_target_cpu().
  virtual std::string target_cpu() const { return {}; }
  // Compiles an optimized, verified graph. May throw ag::Error subclasses for user errors.
  virtual std::unique_ptr<Executable> compile(std::shared_ptr<const Graph> graph, const CompileOptions& options) = 0;
  // Prepares for the process's first compile (builds what every compile needs, runs the compiler
  // once on a small program). The runtime calls it once, on its background compile thread, when
  // the first Function that may compile is created; it may run during a compile.
  virtual void warm_up() {}
};

// The JIT calls this when its library is loaded. Passing nullptr unregisters.
void set_compiler_backend(CompilerBackend* backend);
// The registered backend, or nullptr (functions then run on the interpreter).
CompilerBackend* compiler_backend();

// The graph interpreter: runs nodes with the eager kernels, including If/While.
std::unique_ptr<Executable> make_interpreter(std::shared_ptr<const Graph> graph);
// Runs a graph once with the interpreter (tests, constant folding of sub-graphs).
std::vector<Tensor> interpret(const Graph& graph, std::span<const Tensor> inputs);

}  // namespace ag
