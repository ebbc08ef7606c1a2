// Symbols compiled code takes from the process (process_symbols.h).
#include "process_symbols.h"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/Shared/OrcError.h>
#include <llvm/Support/DynamicLibrary.h>

#include <memory>

namespace ag::jit {
namespace orc = llvm::orc;
namespace {

// glibc's libmvec (the _ZGV* vector math variants the loop vectorizer calls), opened at the first
// lookup of one of its names: opening it slowed the creation of every engine, on the path of a
// new process's first call, and most code never calls it
// (docs/performance.md, "Measured decisions": libmvec on demand). The process generator before
// this one resolves everything else (libm, memcpy), and never a _ZGV name: once libmvec
// is open it would find them too, and two threads compiling at once then defined the same name
// twice (one from each generator), which failed the second one's link ("Duplicate definition of
// symbol '_ZGVbN4v_expf'": JitConcurrency.DifferentFunctionsCompileInParallel, 1 run in 15).
bool is_vector_math(const orc::SymbolStringPtr& name) { return (*name).starts_with("_ZGV"); }

class VectorMathGenerator final : public orc::DefinitionGenerator {
 public:
  llvm::Error tryToGenerate(orc::LookupState&, orc::LookupKind, orc::JITDylib& jd, orc::JITDylibLookupFlags,
                            const orc::SymbolLookupSet& names) override {
    for (const auto& [name, flags] : names) {
      if (!is_vector_math(name)) continue;
      static const bool opened = !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
      if (!opened) break;  // the lookup then reports the missing symbol
      void* p = llvm::sys::DynamicLibrary::SearchForAddressOfSymbol((*name).str());
      if (!p) continue;
      // One name at a time, and a name a concurrent lookup defined first is already right (the
      // same address): a definition is all or nothing.
      orc::SymbolMap one{{name, {orc::ExecutorAddr::fromPtr(p), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable}}};
      if (llvm::Error e = jd.define(orc::absoluteSymbols(std::move(one))))
        if (llvm::Error other = llvm::handleErrors(std::move(e), [](const orc::DuplicateDefinition&) {})) return other;
    }
    return llvm::Error::success();
  }
};

}  // namespace

llvm::Error add_process_symbols(orc::JITDylib& jd, char global_prefix) {
  auto process = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      global_prefix, [](const orc::SymbolStringPtr& name) { return !is_vector_math(name); });
  if (!process) return process.takeError();
  jd.addGenerator(std::move(*process));
  jd.addGenerator(std::make_unique<VectorMathGenerator>());
  return llvm::Error::success();
}

}  // namespace ag::jit
