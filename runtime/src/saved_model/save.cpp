// ag::saved_model::save: each function's optimized graph as graph text, and one graph of
// constants holding the Variables' values (so both are read back by the same parser).
#include <fmt/format.h>

#include <map>
#include <set>

#include "ag/detail/object_code.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/variable_state.h"
#include "ag/graph/printer.h"
#include "ag/saved_model.h"
#include "ag/detail/saved_model_files.h"

namespace ag::saved_model {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail(const std::string& msg) { throw ValueError("ag::saved_model::save: " + msg); }

// The states the graph's `var=`/`state=` attributes name (Variables, random generators), each once.
void collect_states(const Graph& g, std::vector<std::shared_ptr<ag::detail::VariableState>>& out,
                    std::set<const ag::detail::VariableState*>& seen) {
  for (const Node& n : g.nodes) {
    if (n.attrs.variable && seen.insert(n.attrs.variable.get()).second) out.push_back(n.attrs.variable);
    for (const auto& sub : n.subgraphs) collect_states(*sub, out, seen);
  }
}

// The first callback node of `g` (a C++ function a saved model cannot carry), or null.
const Node* first_callback(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (n.attrs.callback) return &n;
    for (const auto& sub : n.subgraphs)
      if (const Node* c = first_callback(*sub)) return c;
  }
  return nullptr;
}

bool valid_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

}  // namespace

void save(const std::string& dir, const std::vector<std::pair<std::string, SavedFunction>>& functions,
          const SaveOptions& options) {
  if (functions.empty()) fail("no functions to save");
  // Compiled code needs the JIT; checked before any file is written.
  const ag::detail::ObjectCodeHooks* code = ag::detail::object_code_hooks();
  if (!options.compiled_for.empty() && !code)
    throw Error("ag::saved_model::save: compiled_for needs the JIT, which this program does not link (link agc::agc)");
  for (const std::string& cpu : options.compiled_for)
    if (!ag::detail::is_cpu_level(cpu))
      fail(fmt::format("compiled_for: '{}' is not a CPU level (x86-64-v2, x86-64-v3, x86-64-v4)", cpu));
  std::set<std::string> names;
  std::vector<std::shared_ptr<ag::detail::VariableState>> states;
  std::set<const ag::detail::VariableState*> seen;
  for (const auto& [name, f] : functions) {
    if (!valid_name(name)) fail(fmt::format("'{}' is not a signature name ([A-Za-z0-9_]+)", name));
    if (!names.insert(name).second) fail(fmt::format("the name '{}' is given twice", name));
    collect_states(*f.graph(), states, seen);
    if (const Node* c = first_callback(*f.graph()))
      fail(fmt::format("'{}' calls {}{}: a C++ callback cannot be saved (its function is not in the graph)", name,
                       ag::detail::user_op_name(c->op), ag::detail::at(c->loc)));
  }
  // Graph text names a state by its description: two states described alike would load as one.
  std::map<std::string, const ag::detail::VariableState*> by_text;
  Graph values;
  values.name = "variables";
  detail::Manifest m;
  m.version = kFormatVersion;
  m.writer = "agc " AG_VERSION;
  for (const auto& state : states) {
    const std::string text = state->describe();
    if (auto [it, fresh] = by_text.emplace(text, state.get()); !fresh)
      fail(fmt::format("two different variables are both {}: give one another name", text));
    for (char c : state->name)
      if (c == '\n' || c == '\t') fail(fmt::format("{} has a tab or a newline in its name", text));
    Node n;
    n.op = OpKind::Const;
    n.attrs.value = Variable::from_state(state).value();
    n.outputs = {TensorType{state->dtype, state->shape}};
    values.results.push_back(values.add(std::move(n)));
    m.variables.push_back({state->name.empty() ? fmt::format("variable #{}", m.variables.size()) : state->name, text});
  }
  std::error_code ec;
  fs::create_directories(fs::path(dir) / detail::kGraphsDir, ec);
  if (ec) fail(fmt::format("cannot create {}: {}", dir, ec.message()));
  auto write = [&](const std::string& relative, const std::string& bytes) {
    detail::write_whole(fs::path(dir) / relative, bytes, "ag::saved_model::save");
    m.files.push_back({relative, bytes.size(), detail::checksum(bytes)});
  };
  write(detail::kVariablesFile, graph_to_text(values, ConstantText::Full));
  for (const auto& [name, f] : functions) {
    const std::string relative = fmt::format("{}/{}.graph", detail::kGraphsDir, name);
    write(relative, graph_to_text(*f.graph(), ConstantText::Full));
    m.signatures.push_back({name, relative, f.signature()});
    for (const std::string& cpu : options.compiled_for) {
      const std::string object = fmt::format("{}/{}.{}.o", detail::kObjectsDir, name, cpu);
      if (m.objects.empty()) fs::create_directories(fs::path(dir) / detail::kObjectsDir);
      write(object, code->compile(f.graph(), cpu, name));
      m.objects.push_back({name, cpu, object});
    }
  }
  // The manifest last: a save that fails before it leaves the old manifest, whose checksums
  // then refuse the new files (never a mix of two saves).
  detail::write_whole(fs::path(dir) / detail::kManifest, detail::manifest_text(m), "ag::saved_model::save");
}

}  // namespace ag::saved_model
