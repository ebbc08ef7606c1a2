// Node line tables for inspection: debug locations per graph node, and reading them back from
// the printed IR and assembly.
#include "node_lines.h"

#include <llvm/IR/AssemblyAnnotationWriter.h>
#include <llvm/IR/DIBuilder.h>
#include <llvm/IR/DebugInfo.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/FormattedStream.h>
#include <llvm/Support/raw_ostream.h>

#include <cctype>
#include <map>
#include <sstream>

namespace ag::jit {
namespace {

// Marks the start of an instruction's line with "\x01<node>\x02", removed after printing.
class NodeMarker final : public llvm::AssemblyAnnotationWriter {
 public:
  explicit NodeMarker(const std::map<const llvm::Instruction*, int32_t>& nodes) : nodes_(nodes) {}
  void emitInstructionAnnot(const llvm::Instruction* inst, llvm::formatted_raw_ostream& os) override {
    const auto it = nodes_.find(inst);
    if (it != nodes_.end()) os << '\x01' << it->second << '\x02';
  }

 private:
  const std::map<const llvm::Instruction*, int32_t>& nodes_;
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

llvm::DISubprogram* add_node_line_scope(llvm::Module& m, llvm::Function& entry) {
  m.addModuleFlag(llvm::Module::Warning, "Debug Info Version", llvm::DEBUG_METADATA_VERSION);
  llvm::DIBuilder dib(m);
  llvm::DIFile* file = dib.createFile(m.getName().str() + ".graph", ".");
  dib.createCompileUnit(llvm::dwarf::DW_LANG_C_plus_plus, file, "agc", /*isOptimized=*/true, "", 0, llvm::StringRef(),
                        llvm::DICompileUnit::LineTablesOnly);
  llvm::DISubprogram* sp = dib.createFunction(
      file, entry.getName(), llvm::StringRef(), file, 0, dib.createSubroutineType(dib.getOrCreateTypeArray({})), 0,
      llvm::DINode::FlagZero, llvm::DISubprogram::SPFlagDefinition | llvm::DISubprogram::SPFlagOptimized);
  entry.setSubprogram(sp);
  dib.finalize();
  return sp;
}

Executable::MappedText print_ir_by_node(llvm::Module& m) {
  std::map<const llvm::Instruction*, int32_t> nodes;
  for (const llvm::Function& f : m)
    for (const llvm::BasicBlock& bb : f)
      for (const llvm::Instruction& inst : bb)
        if (const llvm::DebugLoc& dl = inst.getDebugLoc(); dl && dl.getLine() > 0)
          nodes[&inst] = static_cast<int32_t>(dl.getLine() - 1);
  llvm::StripDebugInfo(m);
  // and the flag add_node_line_scope added, so the text is the plain build's
  if (llvm::NamedMDNode* flags = m.getModuleFlagsMetadata()) {
    std::vector<llvm::MDNode*> kept;
    for (llvm::MDNode* flag : flags->operands())
      if (auto* key = llvm::dyn_cast<llvm::MDString>(flag->getOperand(1)); !key || key->getString() != "Debug Info Version")
        kept.push_back(flag);
    flags->clearOperands();
    for (llvm::MDNode* flag : kept) flags->addOperand(flag);
    if (kept.empty()) m.eraseNamedMetadata(flags);  // the plain build has no module flags
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  NodeMarker marker(nodes);
  m.print(os, &marker);
  os.flush();
  Executable::MappedText out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    int32_t node = -1;
    if (!line.empty() && line[0] == '\x01') {
      const size_t end = line.find('\x02');
      node = std::stoi(line.substr(1, end - 1));
      line.erase(0, end + 1);
    }
    out.text += line + "\n";
    out.line_nodes.push_back(node);
  }
  return out;
}

Executable::MappedText map_assembly_by_node(const std::string& assembly) {
  Executable::MappedText out;
  std::istringstream in(assembly);
  int32_t node = -1;
  bool in_debug_section = false;
  // With debug info every function gets call-frame directives for .debug_frame; the plain
  // build's nounwind functions have none.
  const bool debug_frame_only = assembly.find("\t.cfi_sections .debug_frame") != std::string::npos;
  for (std::string line; std::getline(in, line);) {
    if (starts_with(line, "\t.section")) in_debug_section = starts_with(line, "\t.section\t.debug_");
    if (in_debug_section) continue;
    if (starts_with(line, "\t.loc\t")) {
      // .loc <file> <line> <column> [flags]
      std::istringstream fields(line.substr(6));
      int file = 0, l = 0;
      fields >> file >> l;
      node = l - 1;
      continue;
    }
    const bool numbered_file = starts_with(line, "\t.file\t") && line.size() > 7 && std::isdigit(static_cast<unsigned char>(line[7]));
    if (numbered_file || (debug_frame_only && starts_with(line, "\t.cfi_")) || starts_with(line, ".Ltmp") ||
        starts_with(line, ".Lfunc_begin") || starts_with(line, ".Ldebug_") || starts_with(line, ".Lsec_end"))
      continue;
    // A function starts with no node until its first .loc.
    if (!line.empty() && line[0] != '\t' && line[0] != '.' && line.back() == ':') node = -1;
    out.text += line + "\n";
    out.line_nodes.push_back(node);
  }
  return out;
}

}  // namespace ag::jit
