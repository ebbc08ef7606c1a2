// ag::saved_model::load and Module: every file checked against the manifest before it is
// parsed; fresh Variables from the saved values; each signature's executable made on its
// first call (the JIT's when linked in, else the interpreter).
#include <fmt/format.h>

#include <map>
#include <mutex>
#include <set>

#include "ag/backend.h"
#include "ag/detail/log.h"
#include "ag/detail/object_code.h"
#include "ag/detail/saved_model_loading.h"
#include "ag/detail/variable_state.h"
#include "ag/graph/parser.h"
#include "ag/saved_model.h"
#include "ag/detail/saved_model_files.h"

namespace ag::saved_model {
namespace fs = std::filesystem;

struct Module::Impl {
  struct Entry {
    Signature signature;
    std::shared_ptr<const Graph> graph;
    std::string object, object_cpu;  // saved machine code this process can run (with the JIT), or empty
    mutable std::once_flag once;
    mutable std::unique_ptr<Executable> executable;
  };
  std::map<std::string, std::unique_ptr<Entry>> entries;
  std::vector<std::string> order;  // signature names as saved
  std::vector<std::pair<std::string, Variable>> variables;
  bool jit = true;
  detail::ExecutableFactory factory;  // null: the JIT or the interpreter

  const Entry& entry(const std::string& name) const {
    auto it = entries.find(name);
    if (it == entries.end()) {
      std::string have;
      for (const std::string& n : order) have += (have.empty() ? "" : ", ") + n;
      throw ValueError(fmt::format("ag::saved_model::Module: no signature '{}'; the module has: {}", name, have));
    }
    return *it->second;
  }
};

namespace {

TensorSpec spec_of(const TensorType& t) {
  return t.rank_unknown ? TensorSpec::unknown_rank(t.dtype) : TensorSpec(t.shape, t.dtype);
}

}  // namespace

std::vector<Tensor> Module::call(const std::string& signature, const std::vector<Tensor>& inputs) const {
  const Impl::Entry& e = impl_->entry(signature);
  const std::vector<TensorSpec>& specs = e.signature.inputs;
  if (inputs.size() != specs.size())
    throw ValueError(fmt::format("ag::saved_model::Module::call: '{}' takes {} inputs, got {}", signature, specs.size(), inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& x = inputs[i];
    if (!x.has_value() || x.is_symbolic())
      throw ValueError(fmt::format("ag::saved_model::Module::call: '{}' input {} has no concrete value", signature, i));
    if (x.dtype() != specs[i].dtype())
      throw TypeError(fmt::format("ag::saved_model::Module::call: '{}' input {} must be {}, got {}", signature, i,
                                  specs[i].str(), dtype_name(x.dtype())));
    if (!specs[i].is_compatible_with(x))
      throw ValueError(fmt::format("ag::saved_model::Module::call: '{}' input {} must be {}, got shape {}", signature, i,
                                   specs[i].str(), x.shape().str()));
  }
  std::call_once(e.once, [&] {
    CompilerBackend* backend = impl_->jit ? compiler_backend() : nullptr;
    if (backend && !e.object.empty()) {
      try {
        e.executable = ag::detail::object_code_hooks()->load(e.graph, e.object, signature);
        return;
      } catch (const InternalError& error) {
        ag::detail::log_line(fmt::format("agc: warning: the saved code of '{}' for {} does not link ({}): compiling it instead",
                                         signature, e.object_cpu, error.what()));
      }
    }
    e.executable = backend ? backend->compile(e.graph, CompileOptions{.name = signature, .dump_prefix = {}}) : make_interpreter(e.graph);
  });
  std::vector<Tensor> outputs(e.graph->results.size());
  e.executable->run(inputs, outputs);
  return outputs;
}

std::vector<Signature> Module::signatures() const {
  std::vector<Signature> out;
  for (const std::string& n : impl_->order) out.push_back(impl_->entry(n).signature);
  return out;
}

std::vector<std::pair<std::string, Variable>> Module::variables() const { return impl_->variables; }

const Graph& Module::graph(const std::string& signature) const { return *impl_->entry(signature).graph; }

Module load(const std::string& dir, LoadOptions options) {
  const fs::path root(dir);
  const fs::path manifest_path = root / detail::kManifest;
  if (!fs::exists(manifest_path))
    throw ValueError(fmt::format("ag::saved_model::load: no saved model in {} ({} is missing)", dir, detail::kManifest));
  std::map<std::string, std::string> contents;
  contents[detail::kManifest] = detail::read_all(manifest_path, "ag::saved_model::load");
  // (parse_manifest refuses a path outside the model before it is read; load_files checks every
  // file's size and checksum before anything parses it.)
  for (const detail::Manifest::File& f : detail::parse_manifest(contents[detail::kManifest], manifest_path.string()).files)
    contents[f.path] = detail::read_all(root / f.path, "ag::saved_model::load");
  const std::map<std::string, std::string_view> files(contents.begin(), contents.end());
  return detail::load_files(files, dir, options);
}

Module detail::load_files(const std::map<std::string, std::string_view>& bytes, const std::string& where, LoadOptions options,
                          ExecutableFactory factory) {
  const fs::path root(where);
  const fs::path manifest_path = root / detail::kManifest;
  auto read = [&](const std::string& path) -> std::string_view {
    auto it = bytes.find(path);
    if (it == bytes.end()) throw ValueError(fmt::format("ag::saved_model::load: {} is missing", (root / path).string()));
    return it->second;
  };
  const detail::Manifest m = detail::parse_manifest(read(detail::kManifest), manifest_path.string());
  // Every file, checked before anything reads it; only the files the manifest lists are read.
  std::set<std::string> listed;
  for (const detail::Manifest::File& f : m.files) {
    const std::string_view content = read(f.path);
    if (content.size() != f.size || detail::checksum(content) != f.checksum)
      throw ValueError(fmt::format("ag::saved_model::load: {} is damaged or was altered ({} bytes, checksum {}; the manifest "
                                   "says {} bytes, {})", (root / f.path).string(), content.size(), detail::checksum(content),
                                   f.size, f.checksum));
    listed.insert(f.path);
  }
  auto file = [&](const std::string& path) -> std::string_view {
    if (!listed.contains(path))
      throw ValueError(fmt::format("ag::saved_model::load: {}: {} has no file line", manifest_path.string(), path));
    return read(path);
  };
  auto impl = std::make_shared<Module::Impl>();
  impl->jit = options.jit_compile;
  impl->factory = std::move(factory);
  // The Variables: fresh ones holding the saved values, found by the text graphs name them by.
  const Graph values = graph_from_text(file(detail::kVariablesFile));
  if (values.results.size() != m.variables.size())
    throw ValueError(fmt::format("ag::saved_model::load: {} holds {} values for {} variables", (root / detail::kVariablesFile).string(),
                                 values.results.size(), m.variables.size()));
  std::map<std::string, std::shared_ptr<ag::detail::VariableState>> by_text;
  for (size_t k = 0; k < m.variables.size(); ++k) {
    const Node& n = values.producer(values.results[k]);
    if (n.op != OpKind::Const) throw ValueError(fmt::format("ag::saved_model::load: variable {} is not a constant", k));
    const std::string& name = m.variables[k].name;
    Variable v(n.attrs.value, name.starts_with("variable #") ? std::string() : name);
    by_text[m.variables[k].text] = v.state();
    impl->variables.emplace_back(name, v);
  }
  const GraphTextVariables find = [&](const std::string& text, DType, const Shape&) -> std::shared_ptr<ag::detail::VariableState> {
    auto it = by_text.find(text);
    return it == by_text.end() ? nullptr : it->second;
  };
  for (const detail::Manifest::SignatureLine& s : m.signatures) {
    auto e = std::make_unique<Module::Impl::Entry>();
    e->graph = std::make_shared<const Graph>(graph_from_text(file(s.path), find));
    e->signature.name = s.name;
    e->signature.text = s.text;
    for (size_t i = 0; i < e->graph->num_params(); ++i) e->signature.inputs.push_back(spec_of(e->graph->type(e->graph->param(i))));
    for (ValueId r : e->graph->results) e->signature.outputs.push_back(spec_of(e->graph->type(r)));
    if (!impl->entries.emplace(s.name, std::move(e)).second)
      throw ValueError(fmt::format("ag::saved_model::load: {}: signature '{}' is given twice", manifest_path.string(), s.name));
    impl->order.push_back(s.name);
  }
  // Saved machine code: for each signature, the first level listed (widest first) this CPU runs.
  const ag::detail::ObjectCodeHooks* code = options.jit_compile ? ag::detail::object_code_hooks() : nullptr;
  for (const detail::Manifest::ObjectLine& o : m.objects) {
    auto it = impl->entries.find(o.signature);
    if (it == impl->entries.end())
      throw ValueError(fmt::format("ag::saved_model::load: {}: an object line names no signature: '{}'", manifest_path.string(),
                                   o.signature));
    const std::string_view bytes = file(o.path);
    if (code && it->second->object.empty() && code->can_run(o.cpu)) {
      it->second->object = std::string(bytes);
      it->second->object_cpu = o.cpu;
    }
  }
  // Code that is already there (linked ahead of time) is made ready now: the graph planned
  // while loading, not on the first request.
  if (impl->factory)
    for (auto& [name, e] : impl->entries) {
      Module::Impl::Entry& entry = *e;
      std::call_once(entry.once, [&] { entry.executable = impl->factory(name, entry.graph); });
      if (!entry.executable) throw InternalError("ag::saved_model: no executable for '" + name + "'");
    }
  return Module(impl);
}

}  // namespace ag::saved_model
