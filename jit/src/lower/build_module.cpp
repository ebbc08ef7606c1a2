// Module construction: target settings, the entry function, verification.
#include "build_module.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdlib>

#include "emitter.h"

namespace ag::jit {

std::unique_ptr<llvm::Module> build_module(const Program& program, llvm::LLVMContext& ctx, const llvm::DataLayout& layout,
                                           const std::string& triple, int vector_bytes, const std::string& name,
                                           bool node_lines) {
  auto m = std::make_unique<llvm::Module>(name, ctx);
  m->setDataLayout(layout);
  m->setTargetTriple(triple);
  Emitter emitter(*m, program, vector_bytes, node_lines);
  emitter.emit_entry();
  // For agc's developers: the module as lowered, before LLVM's optimizer (the last one compiled).
  if (const char* d = std::getenv("AG_JIT_DEBUG_IR")) {
    std::error_code ec;
    llvm::raw_fd_ostream out(d, ec);
    m->print(out, nullptr);
  }
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*m, &os)) {
    os.flush();
    throw InternalError("jit: the lowered module of '" + name + "' does not verify: " + problems.substr(0, 2000));
  }
  return m;
}

}  // namespace ag::jit
