// compile_aot_object (aot_compile.h): the JIT's lowering and optimization pipeline, with a target
// machine of its own (the named CPU, position-independent code) and an object written to memory.
#include "aot_compile.h"

#include <fmt/format.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Object/ArchiveWriter.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/X86TargetParser.h>

#include <mutex>

#include "abi.h"
#include "lower/build_module.h"
#include "optimizer.h"
#include "target.h"

namespace ag::jit {

std::string compile_aot_object(const Program& program, const std::string& name, const std::string& cpu,
                               const std::string& entry_symbol) {
  static std::once_flag init;
  std::call_once(init, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) == llvm::X86::CK_None)
    throw Error(fmt::format("ag-aot: {}: not an x86-64 CPU LLVM {} knows (try x86-64-v2, x86-64-v3, x86-64-v4, or a "
                            "processor such as haswell or znver3)",
                            cpu, LLVM_VERSION_MAJOR));
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(llvm::sys::getProcessTriple())};
  jtmb.setCPU(cpu);  // exactly the features the name implies, as AG_JIT_CPU
  // A program, or a shared library, may be position-independent: so is the code linked into it.
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  auto made = jtmb.createTargetMachine();
  if (!made) {
    std::string why;
    llvm::raw_string_ostream os(why);
    os << made.takeError();
    throw InternalError("ag-aot: no target machine for " + cpu + ": " + why);
  }
  std::unique_ptr<llvm::TargetMachine> tm = std::move(*made);

  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = build_module(program, ctx, tm->createDataLayout(), jtmb.getTargetTriple().str(),
                                                 vector_bytes(jtmb), name);
  llvm::Function* entry = m->getFunction(kEntrySymbol);
  if (!entry) throw InternalError("ag-aot: the module of '" + name + "' has no entry");
  entry->setName(entry_symbol);
  // One global symbol per object: the kernels and constants of two functions never collide.
  for (llvm::Function& f : m->functions())
    if (!f.isDeclaration() && &f != entry) f.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable& g : m->globals())
    if (!g.isDeclaration()) g.setLinkage(llvm::GlobalValue::InternalLinkage);
  if (program.config.opt_level > 0) optimize_module(*m, *tm, program.config.opt_level);

  llvm::SmallString<0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    throw InternalError("ag-aot: the target cannot write object files");
  pm.run(*m);
  return std::string(object.str());
}

std::string archive_of(const std::vector<std::pair<std::string, std::string>>& objects) {
  std::vector<llvm::NewArchiveMember> members;
  for (const auto& [name, bytes] : objects)
    members.emplace_back(llvm::MemoryBufferRef(llvm::StringRef(bytes.data(), bytes.size()), name));
  auto archive = llvm::writeArchiveToBuffer(members, llvm::SymtabWritingMode::NormalSymtab, llvm::object::Archive::K_GNU,
                                            /*Deterministic=*/true, /*Thin=*/false);
  if (!archive) {
    std::string why;
    llvm::raw_string_ostream os(why);
    os << archive.takeError();
    throw InternalError("ag-aot: cannot write the archive: " + why);
  }
  return std::string((*archive)->getBuffer());
}

}  // namespace ag::jit
