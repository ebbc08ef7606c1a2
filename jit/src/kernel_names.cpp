// Naming a split module's kernels by their IR (kernel_names.h). A kernel's bitcode as a module of
// its own is what two compiles compare: in the module it came from, its metadata, attribute
// groups and values would be numbered by everything else that module holds. Bitcode, not text:
// LLVM's printer took 0.3-0.6 ms for a nest of 300 instructions, 30 ms for W5b's 79 kernels
// (the writer, 8x less).
#include "kernel_names.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/BLAKE3.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <map>
#include <set>

namespace ag::jit {
namespace {

// The global values a function refers to, in the order it first does (through constant
// expressions too). False when it refers to something no other module could name: a block
// address, an equivalence of a local symbol.
class GlobalsOf {
 public:
  explicit GlobalsOf(const llvm::Function& f) {
    for (const llvm::BasicBlock& bb : f)
      for (const llvm::Instruction& i : bb)
        for (const llvm::Use& op : i.operands())
          if (const auto* c = llvm::dyn_cast<llvm::Constant>(op.get())) visit(c);
  }
  bool nameable() const { return nameable_; }
  const std::vector<const llvm::GlobalValue*>& globals() const { return globals_; }

 private:
  void visit(const llvm::Constant* c) {
    if (llvm::isa<llvm::ConstantData>(c)) return;
    if (const auto* g = llvm::dyn_cast<llvm::GlobalValue>(c)) {
      if (seen_.insert(g).second) globals_.push_back(g);
      return;
    }
    if (llvm::isa<llvm::BlockAddress>(c) || llvm::isa<llvm::DSOLocalEquivalent>(c) || llvm::isa<llvm::NoCFIValue>(c)) {
      nameable_ = false;
      return;
    }
    for (const llvm::Use& op : c->operands()) visit(llvm::cast<llvm::Constant>(op.get()));
  }
  std::vector<const llvm::GlobalValue*> globals_;
  std::set<const llvm::GlobalValue*> seen_;
  bool nameable_ = true;
};

// Whether a constant's initializer refers to no global value: it can be copied as it is.
bool plain_data(const llvm::Constant* c) {
  if (llvm::isa<llvm::ConstantData>(c)) return true;
  if (llvm::isa<llvm::GlobalValue>(c) || llvm::isa<llvm::BlockAddress>(c)) return false;
  for (const llvm::Use& op : c->operands())
    if (!plain_data(llvm::cast<llvm::Constant>(op.get()))) return false;
  return true;
}

// Whether a function of `part` could be a module of its own with the rest of `part`: it calls
// functions of the part or declarations, and reads constants.
bool self_contained(const GlobalsOf& globals, const std::set<const llvm::Function*>& part) {
  if (!globals.nameable()) return false;
  for (const llvm::GlobalValue* g : globals.globals()) {
    if (const auto* fn = llvm::dyn_cast<llvm::Function>(g)) {
      if (!fn->isDeclaration() && !part.count(fn)) return false;
    } else if (const auto* v = llvm::dyn_cast<llvm::GlobalVariable>(g)) {
      if (!v->isConstant() || !v->hasInitializer() || !plain_data(v->getInitializer())) return false;
    } else {
      return false;  // an alias or an ifunc
    }
  }
  return true;
}

// The bitcode of `f` as a module of its own: the callees declared by name, the constants copied
// unnamed, `f` itself and its values named alike in every module.
std::string own_module_bitcode(const llvm::Function& f, const GlobalsOf& globals) {
  const llvm::Module& from = *f.getParent();
  llvm::Module own("agc.kernel", f.getContext());
  own.setDataLayout(from.getDataLayout());
  own.setTargetTriple(from.getTargetTriple());
  llvm::ValueToValueMapTy map;
  for (const llvm::GlobalValue* g : globals.globals()) {
    if (const auto* fn = llvm::dyn_cast<llvm::Function>(g)) {
      llvm::Function* decl = llvm::Function::Create(fn->getFunctionType(), llvm::GlobalValue::ExternalLinkage, fn->getName(), own);
      decl->setAttributes(fn->getAttributes());
      map[fn] = decl;
    } else {
      const auto* v = llvm::cast<llvm::GlobalVariable>(g);
      auto* copy = new llvm::GlobalVariable(own, v->getValueType(), true, v->getLinkage(),
                                            const_cast<llvm::Constant*>(v->getInitializer()), "");
      copy->setAlignment(v->getAlign());
      copy->setUnnamedAddr(v->getUnnamedAddr());
      map[v] = copy;
    }
  }
  llvm::Function* copy = llvm::Function::Create(f.getFunctionType(), llvm::GlobalValue::ExternalLinkage, "agc.kernel", own);
  auto arg = copy->arg_begin();
  for (const llvm::Argument& a : f.args()) map[&a] = &*arg++;
  llvm::SmallVector<llvm::ReturnInst*, 8> returns;
  llvm::CloneFunctionInto(copy, &f, map, llvm::CloneFunctionChangeType::DifferentModule, returns);
  // Unnamed, its values are numbered: their names were made unique in the function the
  // code was first emitted in (`par.outer16`), and say nothing of what it computes.
  for (llvm::BasicBlock& bb : *copy) {
    bb.setName("");
    for (llvm::Instruction& i : bb) i.setName("");
  }
  std::string bitcode;
  llvm::raw_string_ostream os(bitcode);
  llvm::WriteBitcodeToFile(own, os);
  return bitcode;
}

// `agc_entry.nest3` -> `agc_entry.nest`, `agc_parallel_loop.1` -> `agc_parallel_loop.`: the
// number is the function's place in its module.
std::string stem_of(llvm::StringRef name) {
  const llvm::StringRef stem = name.rtrim("0123456789");
  return stem.ends_with(".") || stem.ends_with(".nest") ? stem.str() : name.str();
}

// The part's functions with each one's callees in the part before it (kernels do not recurse).
void callees_first(llvm::Function* f, const std::map<llvm::Function*, GlobalsOf>& globals, std::set<llvm::Function*>& done,
                   std::vector<llvm::Function*>& order) {
  if (!done.insert(f).second) return;
  for (const llvm::GlobalValue* g : globals.at(f).globals())
    if (auto* callee = llvm::dyn_cast<llvm::Function>(const_cast<llvm::GlobalValue*>(g)); callee && globals.count(callee))
      callees_first(callee, globals, done, order);
  order.push_back(f);
}

}  // namespace

bool kernels_self_contained(const llvm::Module& m, const std::vector<std::string>& part) {
  std::set<const llvm::Function*> members;
  for (const std::string& n : part) members.insert(m.getFunction(n));
  for (const llvm::Function* f : members)
    if (!self_contained(GlobalsOf(*f), members)) return false;
  return true;
}

KernelNaming name_kernels_by_content(llvm::Module& m, const std::vector<std::string>& part, const std::string& salt) {
  std::map<llvm::Function*, GlobalsOf> globals;
  for (const std::string& n : part) {
    llvm::Function* f = m.getFunction(n);
    globals.emplace(f, GlobalsOf(*f));
  }
  std::vector<llvm::Function*> order;
  std::set<llvm::Function*> done;
  for (const std::string& n : part) callees_first(m.getFunction(n), globals, done, order);
  KernelNaming naming;
  for (llvm::Function* f : order) {
    // A callee renamed before it is named so in `f`'s bitcode: a caller's name covers its callees.
    const std::string old_name = f->getName().str(), stem = stem_of(old_name);
    llvm::BLAKE3 hash;
    hash.update(salt);
    hash.update(llvm::StringRef("\0", 1));
    hash.update(stem);
    hash.update(llvm::StringRef("\0", 1));
    hash.update(own_module_bitcode(*f, GlobalsOf(*f)));  // anew: a callee may have become another
    const std::string hex = llvm::toHex(hash.final(), /*LowerCase=*/true);
    const std::string prefix = llvm::StringRef(stem).ends_with(".") ? stem : stem + ".";
    const std::string name = prefix + hex.substr(0, 16);
    naming.renames.emplace_back(old_name, name);
    if (llvm::Function* same = m.getFunction(name); same && same != f) {
      f->replaceAllUsesWith(same);  // an identical kernel of this module
      f->eraseFromParent();
      continue;
    }
    f->setName(name);
    f->setLinkage(llvm::GlobalValue::ExternalLinkage);
    f->setVisibility(llvm::GlobalValue::DefaultVisibility);
    f->setDSOLocal(false);  // in another object, maybe another JITDylib: the linker decides how a call reaches it
    naming.kernels.push_back({name, prefix + hex});
  }
  return naming;
}

void rename_declarations(llvm::Module& m, const std::vector<std::pair<std::string, std::string>>& renames) {
  for (const auto& [old_name, name] : renames) {
    llvm::Function* f = m.getFunction(old_name);
    if (!f) continue;
    if (llvm::Function* same = m.getFunction(name); same && same != f) {
      f->replaceAllUsesWith(same);
      f->eraseFromParent();
    } else {
      f->setName(name);
    }
  }
}

}  // namespace ag::jit
