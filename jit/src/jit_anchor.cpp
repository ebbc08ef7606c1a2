// Links LLVM once so the toolchain is known to work; the backend is built on top of this.
#include <llvm/Config/llvm-config.h>
#include <llvm/Support/TargetSelect.h>

extern "C" const char* ag_jit_llvm_version() {
  llvm::InitializeNativeTarget();
  return LLVM_VERSION_STRING;
}
