// ObjectEmitter: one code generation pipeline per TargetMachine, run module after module.
#include "object_emitter.h"

#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <atomic>
#include <cstdlib>
#include <string_view>

#include "ag/error.h"

namespace ag::jit {
namespace {

std::atomic<int64_t> g_reused_runs{0};

void add_pipeline(llvm::TargetMachine& tm, llvm::legacy::PassManager& pm, llvm::raw_pwrite_stream& out) {
  llvm::MCContext* ctx = nullptr;
  if (tm.addPassesToEmitMC(pm, ctx, out)) throw InternalError("jit: the target cannot emit object files");
}

}  // namespace

ObjectEmitter::ObjectEmitter(llvm::TargetMachine& tm) {
  add_pipeline(tm, pipeline_, out_);
}

std::string ObjectEmitter::emit(llvm::Module& m) {
  buffer_.clear();
  pipeline_.run(m);
  if (runs_++ > 0) g_reused_runs.fetch_add(1);
  return std::string(buffer_.begin(), buffer_.end());
}

bool ObjectEmitter::reuse() {
  const char* e = std::getenv("AG_JIT_REUSE_CODEGEN");
  return !e || std::string_view(e) != "0";
}

int64_t ObjectEmitter::reused_runs() { return g_reused_runs.load(); }

std::string emit_object_once(llvm::TargetMachine& tm, llvm::Module& m) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager pm;
  add_pipeline(tm, pm, out);
  pm.run(m);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace ag::jit
