// Links libclang-cpp once so the toolchain is known to work.
#include <clang/Basic/Version.h>

#include <string>

std::string ag_rewriter_clang_version() { return clang::getClangFullVersion(); }
