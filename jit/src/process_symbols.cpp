// Symbols compiled code takes from the process (process_symbols.h).
#include "process_symbols.h"

#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/Support/DynamicLibrary.h>

#include <memory>

namespace ag::jit {
namespace orc = llvm::orc;
namespace {

// glibc's libmvec (the _ZGV* vector math variants the loop vectorizer calls), opened at the first
// lookup of one of its names: opening it took 0.15-0.3 ms of every engine's creation, on the
// path of a new process's first call, and most code never calls it. The process generator
// before this one resolves everything else (libm, memcpy).
class VectorMathGenerator final : public orc::DefinitionGenerator {
 public:
  llvm::Error tryToGenerate(orc::LookupState&, orc::LookupKind, orc::JITDylib& jd, orc::JITDylibLookupFlags,
                            const orc::SymbolLookupSet& names) override {
    orc::SymbolMap found;
    for (const auto& [name, flags] : names) {
      if (!(*name).starts_with("_ZGV")) continue;
      static const bool opened = !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
      if (!opened) break;  // the lookup then reports the missing symbol
      if (void* p = llvm::sys::DynamicLibrary::SearchForAddressOfSymbol((*name).str()))
        found[name] = {orc::ExecutorAddr::fromPtr(p), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    }
    if (found.empty()) return llvm::Error::success();
    return jd.define(orc::absoluteSymbols(std::move(found)));
  }
};

}  // namespace

llvm::Error add_process_symbols(orc::JITDylib& jd, char global_prefix) {
  auto process = orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(global_prefix);
  if (!process) return process.takeError();
  jd.addGenerator(std::move(*process));
  jd.addGenerator(std::make_unique<VectorMathGenerator>());
  return llvm::Error::success();
}

}  // namespace ag::jit
