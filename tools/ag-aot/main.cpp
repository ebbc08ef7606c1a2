// ag-aot: compiles a saved model's signatures ahead of time, for programs that load no LLVM
// (tfcompile's place in TensorFlow; docs/deploying.md). For each signature and CPU level it writes
// one object, all in one static library; then a C++ source that embeds the saved model's files and names those
// objects' entry points, and a header with a typed function per signature. ag_add_aot_library
// (tools/cmake/AgAot.cmake) runs it at build time and builds the three into a static library.
#include <ag/ag.h>
#include <ag/saved_model.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "ag/detail/saved_model_files.h"
#include "aot_compile.h"
#include "cpu_levels.h"
#include "jit_config.h"
#include "plan.h"

namespace {
namespace fs = std::filesystem;

constexpr const char* kUsage = R"(usage: ag-aot <saved model dir> --name <library> --out <dir> [--cpu <level>]...

Compiles every signature of the saved model (ag::saved_model::save) for each CPU level and writes,
into <dir>:
  <library>.h          a function per signature, in namespace <library>
  <library>.cpp        the saved model's files, embedded, and the entry points
  lib<library>_code.a  the code: one object per signature and level
A program that links them with agc::jit_core (no LLVM) runs each signature with the code of the
widest level its CPU has.

  --cpu   x86-64-v2, x86-64-v3 or x86-64-v4, widest first when repeated
          (default: x86-64-v3 and, for older CPUs, x86-64-v2)
The AG_JIT_OPT, AG_JIT_ROLL, AG_JIT_VECTOR_LOOPS and AG_NONTEMPORAL settings apply, as for the JIT.
)";

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "ag-aot: error: " << what << "\n\n" << kUsage;
  std::exit(2);
}

bool is_identifier(const std::string& s) { return std::regex_match(s, std::regex("[A-Za-z_][A-Za-z0-9_]*")); }

std::string symbol_part(std::string s) {
  for (char& c : s)
    if (c == '-') c = '_';
  return s;
}

std::string byte_array(const std::string& name, const std::string& bytes) {
  std::string s = fmt::format("alignas(8) const unsigned char {}[] = {{", name);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i % 24 == 0) s += "\n   ";
    s += fmt::format(" {},", static_cast<unsigned>(static_cast<unsigned char>(bytes[i])));
  }
  return s + (bytes.empty() ? " 0};\n" : "\n};\n");
}

struct Compiled {
  std::string signature;
  std::vector<std::pair<std::string, std::string>> code;  // (cpu, symbol)
};

}  // namespace

int main(int argc, char** argv) {
  std::string dir, name, out;
  std::vector<std::string> cpus;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--name") name = value();
    else if (a == "--out") out = value();
    else if (a == "--cpu") cpus.push_back(value());
    else if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a.starts_with("-")) usage_error("unknown option " + a);
    else if (dir.empty()) dir = a;
    else usage_error("more than one saved model: " + dir + ", " + a);
  }
  if (dir.empty() || name.empty() || out.empty()) usage_error("a saved model, --name and --out are required");
  if (!is_identifier(name)) usage_error("--name " + name + ": the library's name is a C++ namespace: [A-Za-z_][A-Za-z0-9_]*");
  if (cpus.empty()) cpus = {"x86-64-v3", "x86-64-v2"};
  for (const std::string& c : cpus)
    if (!ag::jit::is_cpu_level(c))
      usage_error("--cpu " + c + ": the levels are x86-64-v2, x86-64-v3 and x86-64-v4 (a program picks the widest its CPU has)");

  try {
    ag::saved_model::Module model = ag::saved_model::load(dir, {.jit_compile = false});
    fs::create_directories(out);
    ag::jit::JitConfig config = ag::jit::JitConfig::from_environment();
    std::vector<Compiled> compiled;
    std::vector<std::pair<std::string, std::string>> objects;
    std::string typed_decls, typed_defs;
    for (const ag::saved_model::Signature& sig : model.signatures()) {
      if (!is_identifier(sig.name) || sig.name == "module" || sig.name == "selected_cpu")
        throw ag::ValueError(fmt::format("ag-aot: signature '{}' cannot be a function of the generated header (a C++ "
                                         "identifier other than module and selected_cpu): save it under another name",
                                         sig.name));
      auto graph = std::make_shared<const ag::Graph>(model.graph(sig.name));
      ag::jit::Program program = ag::jit::plan_program(graph);
      ag::jit::apply_config(program, config);
      Compiled c{sig.name, {}};
      for (const std::string& cpu : cpus) {
        const std::string symbol = fmt::format("agc_aot_{}_{}_{}", name, sig.name, symbol_part(cpu));
        const std::string object = ag::jit::compile_aot_object(program, sig.name, cpu, symbol);
        objects.emplace_back(fmt::format("{}.{}.o", sig.name, cpu), object);
        c.code.emplace_back(cpu, symbol);
      }
      compiled.push_back(c);
      // The typed function: one ag::Tensor per input; one result as an ag::Tensor, else a vector.
      // The parameters keep the traced function's names when its signature gives them all.
      std::vector<std::string> names;
      const std::regex named_param("(?:\\(|, )([A-Za-z_][A-Za-z0-9_]*): TensorSpec");
      for (auto it = std::sregex_iterator(sig.text.begin(), sig.text.end(), named_param); it != std::sregex_iterator(); ++it)
        names.push_back((*it)[1].str());
      if (names.size() != sig.inputs.size()) names.clear();
      for (size_t i = 0; i < names.size() && !names.empty(); ++i)
        if (names[i] == sig.name || std::count(names.begin(), names.end(), names[i]) > 1) names.clear();
      std::string params, args, comment;
      for (size_t i = 0; i < sig.inputs.size(); ++i) {
        const std::string param = names.empty() ? fmt::format("in{}", i) : names[i];
        params += fmt::format("{}const ag::Tensor& {}", i ? ", " : "", param);
        args += fmt::format("{}{}", i ? ", " : "", param);
        comment += fmt::format("{}{}", i ? ", " : "", sig.inputs[i].str());
      }
      std::string results;
      for (size_t i = 0; i < sig.outputs.size(); ++i) results += fmt::format("{}{}", i ? ", " : "", sig.outputs[i].str());
      const bool one = sig.outputs.size() == 1;
      const std::string result_type = one ? "ag::Tensor" : "std::vector<ag::Tensor>";
      typed_decls += fmt::format("// ({}) -> ({})\n// saved as {}\n{} {}({});\n\n", comment, results, sig.text, result_type,
                                 sig.name, params);
      typed_defs += fmt::format("{} {}({}) {{\n  {}module().call(\"{}\", {{{}}}){};\n}}\n\n", result_type, sig.name, params,
                                "return ", sig.name, args, one ? "[0]" : "");
    }

    // The source: the saved model's files, byte for byte, and the entry points.
    std::string cpp = fmt::format("// Generated by ag-aot from {}: do not edit.\n#include \"{}.h\"\n\n#include <ag/aot.h>\n\n",
                                  dir, name);
    // The manifest and the files it lists (load checked them all).
    namespace files = ag::saved_model::detail;
    std::vector<std::string> paths = {files::kManifest};
    const fs::path manifest = fs::path(dir) / files::kManifest;
    for (const files::Manifest::File& f : files::parse_manifest(files::read_all(manifest, "ag-aot"), manifest.string()).files)
      paths.push_back(f.path);
    std::string files_init;
    for (size_t i = 0; i < paths.size(); ++i) {
      const std::string bytes = files::read_all(fs::path(dir) / paths[i], "ag-aot");
      cpp += byte_array(fmt::format("kFile{}", i), bytes);
      files_init += fmt::format("    {{\"{}\", kFile{}, {}}},\n", paths[i], i, bytes.size());
    }
    cpp += "\nextern \"C\" {\n";
    for (const Compiled& c : compiled)
      for (const auto& [cpu, symbol] : c.code) cpp += fmt::format("int32_t {}(const void* args, void* ctx);\n", symbol);
    cpp += "}\n\nnamespace {\n\nconst ag::aot::EmbeddedFile kFiles[] = {\n" + files_init + "};\n\n";
    std::string sigs_init;
    for (const Compiled& c : compiled) {
      cpp += fmt::format("const ag::aot::CompiledCode k_{}[] = {{\n", c.signature);
      for (const auto& [cpu, symbol] : c.code) cpp += fmt::format("    {{\"{}\", {}}},\n", cpu, symbol);
      cpp += "};\n";
      sigs_init += fmt::format("    {{\"{0}\", k_{0}, {1}}},\n", c.signature, c.code.size());
    }
    cpp += "const ag::aot::CompiledSignature kSignatures[] = {\n" + sigs_init + "};\n\n";
    cpp += fmt::format("const ag::aot::EmbeddedModel kModel = {{\"{}\", kFiles, {}, kSignatures, {}}};\n\n}}  // namespace\n\n",
                       name, paths.size(), compiled.size());
    cpp += fmt::format("namespace {} {{\n\nconst ag::saved_model::Module& module() {{\n"
                       "  static const ag::saved_model::Module m = ag::aot::load(kModel);\n  return m;\n}}\n\n"
                       "std::string selected_cpu(const std::string& signature) {{\n"
                       "  for (const ag::aot::CompiledSignature& s : kSignatures)\n"
                       "    if (signature == s.name) return ag::aot::selected_cpu(s);\n"
                       "  return {{}};\n}}\n\n{}}}  // namespace {}\n",
                       name, typed_defs, name);

    std::string h = fmt::format(
        "// Generated by ag-aot from {}: do not edit.\n// The saved model's signatures, compiled ahead of time for {}.\n"
        "#pragma once\n\n#include <ag/saved_model.h>\n\n#include <string>\n#include <vector>\n\nnamespace {} {{\n\n"
        "// The saved model (its signatures, Variables, graphs), loaded on first use; its signatures run the\n"
        "// compiled code of the widest CPU level this CPU has.\nconst ag::saved_model::Module& module();\n\n"
        "// The level `signature` runs on this CPU (\"x86-64-v3\"), or \"\" when it runs on the interpreter.\n"
        "std::string selected_cpu(const std::string& signature);\n\n{}}}  // namespace {}\n",
        dir, fmt::join(cpus, ", "), name, typed_decls, name);
    files::write_whole(fs::path(out) / fmt::format("lib{}_code.a", name), ag::jit::archive_of(objects), "ag-aot");
    files::write_whole(fs::path(out) / (name + ".cpp"), cpp, "ag-aot");
    files::write_whole(fs::path(out) / (name + ".h"), h, "ag-aot");
    std::printf("ag-aot: %s: %zu signature%s for %s -> %s\n", name.c_str(), compiled.size(), compiled.size() == 1 ? "" : "s",
                fmt::format("{}", fmt::join(cpus, ", ")).c_str(), out.c_str());
  } catch (const ag::Error& e) {
    std::cerr << "ag-aot: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
