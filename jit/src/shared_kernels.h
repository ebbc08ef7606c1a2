// The process's kernels shared across compiles (docs/jit.md, "Kernels shared across compiles"): a
// split module's kernels, named by their own IR (kernel_names.h), are linked into one JITDylib,
// agc.kernels, which every function's JITDylib links against. A compile whose kernels are there
// already, from another function or another signature, declares them and compiles the rest; a
// kernel being compiled by another compile is waited for, not compiled twice. Each object of
// kernels counts the functions whose code calls it (and the objects whose kernels do) and leaves
// the JIT with the last of them. LLVM-free header.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <condition_variable>
#include <map>
#include <string>
#include <vector>

#include "kernel_names.h"

namespace llvm::orc {
class LLJIT;
class JITDylib;
}  // namespace llvm::orc

namespace ag::jit {

struct SharedObject;  // one object file of kernels in agc.kernels (shared_kernels.cpp)
using SharedObjects = std::vector<std::shared_ptr<SharedObject>>;

class SharedKernels {
 public:
  SharedKernels(llvm::orc::LLJIT& jit, llvm::orc::JITDylib& dylib);
  ~SharedKernels();

  // What one compile does with its kernels.
  struct Claim {
    std::vector<std::string> found;       // kernels another compile made or is making: declared
    std::vector<std::string> to_compile;  // the rest: this compile's second module
    SharedObjects uses;                   // the objects `found` are in; each counts this compile
    std::shared_ptr<SharedObject> own;    // the object `to_compile` will be (null when empty)
  };
  // Under one lock: a kernel found is counted as used, one not found is this compile's to make.
  Claim claim(const std::vector<NamedKernel>& kernels);
  // Waits until every object `claim` uses is linked; InternalError if its compile failed. A
  // compile waits only for compiles that claimed before it (each claims every kernel not found
  // at once), so no two wait for each other.
  void wait(const Claim& claim) const;
  // Links `object`, this compile's second module, into agc.kernels and makes it ready for the
  // compiles waiting for it; after wait(), as its kernels may call those it found. Throws
  // InternalError when it cannot be linked.
  // `label` names the object for perf maps (the function that compiled it first).
  void provide(Claim& claim, std::string object, const std::string& label);
  // A compile that failed: the kernels it was making are failed for their waiters and no
  // longer shared, and what it used is released.
  void abandon(Claim& claim);
  // The objects a function's code used lose that user; one left with none leaves the JIT.
  void release(const SharedObjects& objects);
  // The objects a compile's code calls into, directly or through other kernels: with its own
  // object, a disk-cache entry that links alone.
  std::vector<std::string> objects_of(const Claim& claim) const;
  // The claim's objects, which the function's code keeps (CodeHandle).
  static SharedObjects held_by(const Claim& claim);

  // Kernels found shared by compiles so far, and objects of kernels in the JIT now (tests).
  int64_t hits() const;
  int64_t live_objects() const;

 private:
  void release_locked(const std::shared_ptr<SharedObject>& object);
  llvm::orc::LLJIT& jit_;
  llvm::orc::JITDylib& dylib_;
  mutable std::mutex mu_;
  mutable std::condition_variable linked_;
  std::map<std::string, std::shared_ptr<SharedObject>> by_key_;
  int64_t hits_ = 0;
  int64_t live_ = 0;
  uint64_t counter_ = 0;
};

}  // namespace ag::jit
