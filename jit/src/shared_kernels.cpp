// Objects of kernels shared across compiles (shared_kernels.h). Each object is linked under a
// resource tracker of its own, so that it can leave agc.kernels alone; it leaves under the lock
// that claims keys, so a kernel is never defined twice in agc.kernels.
#include "shared_kernels.h"

#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectFileInterface.h>
#include <llvm/Support/MemoryBuffer.h>

#include <set>

#include "llvm_errors.h"

namespace ag::jit {

struct SharedObject {
  enum class State { Compiling, Linked, Failed };
  State state = State::Compiling;
  int64_t users = 0;              // functions' code and other objects that call into it
  std::vector<std::string> keys;  // its kernels (by_key_ points here while it lives)
  std::string bytes;              // the object file, once linked
  llvm::orc::ResourceTrackerSP tracker;
  SharedObjects depends;          // objects its kernels call into, each counting it
};

SharedKernels::SharedKernels(llvm::orc::LLJIT& jit, llvm::orc::JITDylib& dylib) : jit_(jit), dylib_(dylib) {}

// The engine removes what is left before it ends its session (Engine::~Engine).
SharedKernels::~SharedKernels() {
  std::lock_guard lock(mu_);
  for (auto& [key, object] : by_key_)
    if (object->tracker) llvm::consumeError(object->tracker->remove());
}

SharedKernels::Claim SharedKernels::claim(const std::vector<NamedKernel>& kernels) {
  Claim c;
  std::lock_guard lock(mu_);
  std::set<SharedObject*> counted;
  for (const NamedKernel& k : kernels) {
    auto it = by_key_.find(k.key);
    if (it != by_key_.end()) {
      c.found.push_back(k.name);
      ++hits_;
      if (counted.insert(it->second.get()).second) {
        ++it->second->users;
        c.uses.push_back(it->second);
      }
      continue;
    }
    if (!c.own) {
      c.own = std::make_shared<SharedObject>();
      c.own->users = 1;
    }
    c.own->keys.push_back(k.key);
    by_key_.emplace(k.key, c.own);
    c.to_compile.push_back(k.name);
  }
  return c;
}

void SharedKernels::provide(Claim& c, std::string object, const std::string& label) {
  llvm::orc::ExecutionSession& session = jit_.getExecutionSession();
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  {
    std::lock_guard lock(mu_);
    buffer = llvm::MemoryBuffer::getMemBufferCopy(object, "agc.kernels." + std::to_string(counter_++) + "." + label);
  }
  auto fail = [](const char* what, llvm::Error e) {
    throw InternalError(std::string("jit: shared kernels: ") + what + ": " + message_of(std::move(e)));
  };
  auto defined = llvm::orc::getObjectFileInterface(session, buffer->getMemBufferRef());
  if (!defined) fail("reading the object", defined.takeError());
  llvm::orc::SymbolLookupSet symbols;
  for (const auto& [name, flags] : defined->SymbolFlags)
    if (flags.isExported()) symbols.add(name);
  llvm::orc::ResourceTrackerSP tracker = dylib_.createResourceTracker();
  if (llvm::Error e = jit_.addObjectFile(tracker, std::move(buffer))) fail("linking", std::move(e));
  // Looked up, and so finalized, before any compile that waits for them links code calling them.
  if (auto ready = session.lookup(llvm::orc::makeJITDylibSearchOrder(&dylib_), std::move(symbols)); !ready) {
    llvm::consumeError(tracker->remove());
    fail("linking", ready.takeError());
  }
  std::lock_guard lock(mu_);
  c.own->bytes = std::move(object);
  c.own->tracker = std::move(tracker);
  c.own->depends = c.uses;  // its kernels may call those: they stay while it does
  for (const auto& d : c.uses) ++d->users;
  c.own->state = SharedObject::State::Linked;
  ++live_;
  linked_.notify_all();
}

void SharedKernels::wait(const Claim& c) const {
  std::unique_lock lock(mu_);
  for (const auto& o : c.uses) {
    linked_.wait(lock, [&] { return o->state != SharedObject::State::Compiling; });
    if (o->state == SharedObject::State::Failed)
      throw InternalError("jit: shared kernels: a kernel this function calls failed to compile in another compile");
  }
}

void SharedKernels::abandon(Claim& c) {
  std::lock_guard lock(mu_);
  if (c.own && c.own->state == SharedObject::State::Compiling) {
    c.own->state = SharedObject::State::Failed;
    linked_.notify_all();
  }
  for (const auto& o : held_by(c)) release_locked(o);
}

void SharedKernels::release(const SharedObjects& objects) {
  std::lock_guard lock(mu_);
  for (const auto& o : objects) release_locked(o);
}

void SharedKernels::release_locked(const std::shared_ptr<SharedObject>& object) {
  if (--object->users > 0) return;
  for (const std::string& key : object->keys)
    if (auto it = by_key_.find(key); it != by_key_.end() && it->second == object) by_key_.erase(it);
  if (object->tracker) {
    llvm::consumeError(object->tracker->remove());
    object->tracker = nullptr;
    --live_;
  }
  for (const auto& d : object->depends) release_locked(d);
  object->depends.clear();
}

std::vector<std::string> SharedKernels::objects_of(const Claim& c) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  std::set<const SharedObject*> seen;
  std::vector<const SharedObject*> todo;
  for (const auto& o : held_by(c)) todo.push_back(o.get());
  while (!todo.empty()) {
    const SharedObject* o = todo.back();
    todo.pop_back();
    if (!seen.insert(o).second) continue;
    out.push_back(o->bytes);
    for (const auto& d : o->depends) todo.push_back(d.get());
  }
  return out;
}

SharedObjects SharedKernels::held_by(const Claim& c) {
  SharedObjects held = c.uses;
  if (c.own) held.push_back(c.own);
  return held;
}

int64_t SharedKernels::hits() const {
  std::lock_guard lock(mu_);
  return hits_;
}

int64_t SharedKernels::live_objects() const {
  std::lock_guard lock(mu_);
  return live_;
}

}  // namespace ag::jit
