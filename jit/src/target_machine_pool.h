// A few TargetMachines per optimization level, handed to one compile at a time (engine.cpp):
// creating one costs as much as compiling a small function. LLVM: included by engine code only.
#pragma once

#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/Target/TargetMachine.h>

#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace ag::jit {

class TargetMachinePool {
 public:
  explicit TargetMachinePool(llvm::orc::JITTargetMachineBuilder jtmb) : jtmb_(std::move(jtmb)) {}

  struct Lease {
    Lease(TargetMachinePool* p, int l, std::unique_ptr<llvm::TargetMachine> t) : pool(p), level(l), tm(std::move(t)) {}
    Lease(Lease&& o) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (tm) pool->give_back(level, std::move(tm));
    }
    TargetMachinePool* pool;
    int level;
    std::unique_ptr<llvm::TargetMachine> tm;
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
    return Lease(this, level, std::move(*tm));
  }

 private:
  void give_back(int level, std::unique_ptr<llvm::TargetMachine> tm) {
    if (!tm) return;
    std::lock_guard lock(mu_);
    free_[level].push_back(std::move(tm));
  }
  llvm::orc::JITTargetMachineBuilder jtmb_;
  std::mutex mu_;
  std::map<int, std::vector<std::unique_ptr<llvm::TargetMachine>>> free_;
};

}  // namespace ag::jit
