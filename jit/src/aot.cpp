// ag::aot::load (ag/aot.h): an embedded saved model whose signatures run code linked into the
// program. No LLVM: this is part of agc::jit_core.
#include "ag/aot.h"

#include <fmt/format.h>

#include <map>

#include "ag/detail/log.h"
#include "ag/detail/saved_model_loading.h"
#include "compiled_executable.h"
#include "cpu_levels.h"

namespace ag::aot {
namespace {

class AotExecutable final : public jit::CompiledExecutable {
 public:
  AotExecutable(std::shared_ptr<const Graph> graph, EntryPoint entry)
      : CompiledExecutable(std::move(graph), jit::JitConfig{}) {
    // Code linked into the program: its helper calls are not known here, so it keeps a CallState.
    set_code(nullptr, reinterpret_cast<jit::EntryFn>(entry), /*from_disk=*/false, /*uses_call_state=*/true);
  }
  std::string_view backend_name() const override { return "aot"; }
};

// The code of the widest level this CPU runs, or null.
const CompiledCode* code_for_this_cpu(const CompiledSignature& signature) {
  for (size_t i = 0; i < signature.num_code; ++i)
    if (jit::cpu_level_fits(signature.code[i].cpu)) return &signature.code[i];
  return nullptr;
}

}  // namespace

std::string selected_cpu(const CompiledSignature& signature) {
  const CompiledCode* code = code_for_this_cpu(signature);
  return code ? code->cpu : std::string();
}

saved_model::Module load(const EmbeddedModel& model) {
  // Views of the embedded bytes: nothing is copied but what the graphs parse into.
  std::map<std::string, std::string_view> files;
  for (size_t i = 0; i < model.num_files; ++i)
    files[model.files[i].path] = std::string_view(reinterpret_cast<const char*>(model.files[i].bytes), model.files[i].size);
  std::map<std::string, const CompiledSignature*> compiled;
  for (size_t i = 0; i < model.num_signatures; ++i) compiled[model.signatures[i].name] = &model.signatures[i];
  const std::string library = model.name;
  auto factory = [compiled, library](const std::string& name,
                                     const std::shared_ptr<const Graph>& graph) -> std::unique_ptr<Executable> {
    auto it = compiled.find(name);
    if (it == compiled.end()) return make_interpreter(graph);  // ag-aot compiles every signature
    const CompiledSignature& s = *it->second;
    if (const CompiledCode* code = code_for_this_cpu(s)) {
      if (ag::detail::log_enabled(ag::detail::LogTopic::Compile))
        ag::detail::log_line(fmt::format("agc: aot: {}: '{}' runs the code compiled ahead of time for {}", library, name, code->cpu));
      return std::make_unique<AotExecutable>(graph, code->entry);
    }
    std::string levels;
    for (size_t i = 0; i < s.num_code; ++i) levels += (levels.empty() ? "" : ", ") + std::string(s.code[i].cpu);
    ag::detail::log_line(fmt::format("agc: warning: {}: '{}' was compiled for {}, which this CPU cannot run: it runs on the "
                                     "graph interpreter (add a narrower CPU level to ag_add_aot_library's CPUS)",
                                     library, name, levels));
    return make_interpreter(graph);
  };
  return saved_model::detail::load_files(files, library, saved_model::LoadOptions{.jit_compile = false}, factory);
}

}  // namespace ag::aot
