// A few TargetMachines per optimization level, handed to one compile at a time (engine.cpp):
// creating one costs as much as compiling a small function, and each keeps its code generation
// pipeline (object_emitter.h). LLVM: included by engine code only.
#pragma once

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/Target/TargetMachine.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "object_emitter.h"

namespace ag::jit {

class TargetMachinePool {
 public:
  explicit TargetMachinePool(llvm::orc::JITTargetMachineBuilder jtmb) : jtmb_(std::move(jtmb)) {}

  // A machine and its code generation pipeline (object_emitter.h), built on its first object.
  struct Machine {
    std::unique_ptr<llvm::TargetMachine> tm;
    std::unique_ptr<ObjectEmitter> emitter;  // declared after tm: destroyed before it
  };

  struct Lease {
    Lease(TargetMachinePool* p, int l, Machine m) : pool(p), level(l), tm(std::move(m.tm)), emitter(std::move(m.emitter)) {}
    Lease(Lease&& o) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (tm) pool->give_back(level, Machine{std::move(tm), std::move(emitter)});
    }
    // `m`'s object file: through this machine's pipeline, or one built for `m` alone when
    // AG_JIT_REUSE_CODEGEN=0.
    std::string object(llvm::Module& m) {
      if (!ObjectEmitter::reuse()) return emit_object_once(*tm, m);
      if (!emitter) emitter = std::make_unique<ObjectEmitter>(*tm);
      return emitter->emit(m);
    }
    TargetMachinePool* pool;
    int level;
    std::unique_ptr<llvm::TargetMachine> tm;
    std::unique_ptr<ObjectEmitter> emitter;
  };
  llvm::Expected<Lease> take(int level) {
    {
      std::lock_guard lock(mu_);
      auto& free = free_[level];
      if (!free.empty()) {
        Lease l(this, level, std::move(free.back()));
        free.pop_back();
        return llvm::Expected<Lease>(std::move(l));
      }
    }
    llvm::orc::JITTargetMachineBuilder b = jtmb_;
    b.setCodeGenOptLevel(level == 0 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Default);
    auto tm = b.createTargetMachine();
    if (!tm) return tm.takeError();
    if (level == 0) (*tm)->setO0WantsFastISel(true);  // the fast path: FastISel, no IR passes
    return Lease(this, level, Machine{std::move(*tm), nullptr});
  }

 private:
  void give_back(int level, Machine m) {
    std::lock_guard lock(mu_);
    free_[level].push_back(std::move(m));
  }
  llvm::orc::JITTargetMachineBuilder jtmb_;
  std::mutex mu_;
  std::map<int, std::vector<Machine>> free_;
};

}  // namespace ag::jit
