// LLVM's errors as agc's: an llvm::Error or a failed llvm::Expected becomes an InternalError
// naming what failed. LLVM: included by engine code only.
#pragma once

#include <llvm/Support/Error.h>
#include <llvm/Support/raw_ostream.h>

#include <string>

#include "ag/error.h"

namespace ag::jit {

inline std::string message_of(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return s;
}

template <class T>
T take(llvm::Expected<T> v, const char* what) {
  if (!v) throw InternalError(std::string("jit: ") + what + ": " + message_of(v.takeError()));
  return std::move(*v);
}

inline void check(llvm::Error e, const char* what) {
  if (e) throw InternalError(std::string("jit: ") + what + ": " + message_of(std::move(e)));
}

}  // namespace ag::jit
