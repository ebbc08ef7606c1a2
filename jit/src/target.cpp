// AG_JIT_CPU: which CPU the JIT compiles for (see target.h).
#include "target.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/X86TargetParser.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

#include "ag/error.h"

namespace ag::jit {
namespace {

std::string message_of(llvm::Error e) {
  std::string s;
  llvm::handleAllErrors(std::move(e), [&](const llvm::ErrorInfoBase& info) { s = info.message(); });
  return s;
}

}  // namespace

llvm::orc::JITTargetMachineBuilder jit_target_machine() {
  const char* env = std::getenv("AG_JIT_CPU");
  const std::string cpu = env ? env : "";
  if (cpu.empty() || cpu == "host") {
    auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!host) throw InternalError("jit: cannot target the host: " + message_of(host.takeError()));
    return std::move(*host);
  }
  if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) == llvm::X86::CK_None)
    throw Error(fmt::format("AG_JIT_CPU={}: not an x86-64 CPU LLVM {} knows (try x86-64-v2, x86-64-v3, x86-64-v4, "
                            "a processor such as haswell or znver3, or host)",
                            cpu, LLVM_VERSION_MAJOR));
  // The named CPU's features must all be the host's: the code runs in this process.
  llvm::SmallVector<llvm::StringRef, 64> features;
  llvm::X86::getFeaturesForCPU(cpu, features);
  const auto host = llvm::sys::getHostCPUFeatures();
  std::string missing;
  for (llvm::StringRef f : features) {
    auto it = host.find(f);
    if (it != host.end() && !it->second) missing += (missing.empty() ? "" : ", ") + f.str();
  }
  if (!missing.empty())
    throw Error(fmt::format("AG_JIT_CPU={}: this CPU ({}) lacks {}, so code generated for {} could not run here", cpu,
                            llvm::sys::getHostCPUName().str(), missing, cpu));
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(llvm::sys::getProcessTriple())};
  jtmb.setCPU(cpu);  // no explicit features: exactly those the CPU name implies
  return jtmb;
}

std::string target_id_of(const llvm::orc::JITTargetMachineBuilder& target) {
  std::string features;
  for (const std::string& f : target.getFeatures().getFeatures()) features += f + ",";
  return target.getTargetTriple().str() + "|" + target.getCPU() + "|" + features + "|llvm-" LLVM_VERSION_STRING;
}

const std::string& current_target_id() {
  // Host detection costs a fraction of a millisecond: once per AG_JIT_CPU value. The map is never
  // destroyed (compiles may run at exit) and never shrinks, so a returned reference stays valid.
  static std::mutex mu;
  static auto* known = new std::map<std::string, std::string>;
  const char* env = std::getenv("AG_JIT_CPU");
  const std::string cpu = env ? env : "";
  {
    std::lock_guard lock(mu);
    if (auto it = known->find(cpu); it != known->end()) return it->second;
  }
  std::string id = target_id_of(jit_target_machine());
  std::lock_guard lock(mu);
  return known->emplace(cpu, std::move(id)).first->second;
}

int vector_bytes(const llvm::orc::JITTargetMachineBuilder& target) {
  // The host's builder lists its features ("+avx2", "-avx512f"); a named CPU's has none but its
  // name, whose list names features without those they imply: x86-64-v4 lists avx512vl and
  // avx512bw but not avx512f, and took 32-byte vectors until the implied ones were added.
  llvm::StringMap<bool> enabled;
  for (const std::string& f : target.getFeatures().getFeatures())
    if (f.size() > 1) enabled[f.substr(1)] = f[0] == '+';
  if (enabled.empty()) {
    llvm::SmallVector<llvm::StringRef, 64> named;
    llvm::X86::getFeaturesForCPU(target.getCPU(), named);
    for (llvm::StringRef f : named) {
      enabled[f] = true;
      llvm::X86::updateImpliedFeatures(f, true, enabled);  // sets those `f` implies, not `f`
    }
  }
  const bool wide = enabled.lookup("avx512f") && (!enabled.count("evex512") || enabled.lookup("evex512"));
  return wide ? 64 : enabled.lookup("avx2") ? 32 : 16;
}

}  // namespace ag::jit
