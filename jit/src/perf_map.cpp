// The perf map (perf_map.h): a JITLink plugin that, once a linked object's addresses are final,
// appends one line per function, "START SIZE NAME" in hex, to perf's map file for this process.
// A function is named by its object ("agc.7.simulate.0": the concrete function's compile number
// and name, then the object's index) and its symbol (the entry, a parallel loop's worker, a
// matmul kernel), so samples split by loop nest and kernel.
#include "perf_map.h"

#include <fmt/format.h>
#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "ag/detail/log.h"
#include "ag/error.h"

namespace ag::jit {
namespace {

namespace orc = llvm::orc;
namespace jitlink = llvm::jitlink;

class PerfMapPlugin : public orc::ObjectLinkingLayer::Plugin {
 public:
  explicit PerfMapPlugin(std::FILE* file) : file_(file) {}
  ~PerfMapPlugin() override { std::fclose(file_); }

  void modifyPassConfig(orc::MaterializationResponsibility&, jitlink::LinkGraph&, jitlink::PassConfiguration& config) override {
    // A call to a local function (a parallel loop's worker) relocates against its section, not
    // its symbol, and JITLink's pruning then drops the symbol: kept, it costs nothing (its code
    // is live anyway) and names the worker.
    config.PrePrunePasses.push_back([](jitlink::LinkGraph& g) {
      for (jitlink::Symbol* s : g.defined_symbols())
        if (s->isCallable() && s->hasName()) s->setLive(true);
      return llvm::Error::success();
    });
    config.PostFixupPasses.push_back([this](jitlink::LinkGraph& g) {
      record(g);
      return llvm::Error::success();
    });
  }
  llvm::Error notifyFailed(orc::MaterializationResponsibility&) override { return llvm::Error::success(); }
  llvm::Error notifyRemovingResources(orc::JITDylib&, orc::ResourceKey) override { return llvm::Error::success(); }
  void notifyTransferringResources(orc::JITDylib&, orc::ResourceKey, orc::ResourceKey) override {}

 private:
  void record(jitlink::LinkGraph& g) {
    const std::lock_guard lock(mu_);
    for (const jitlink::Symbol* s : g.defined_symbols()) {
      if (!s->isCallable() || !s->hasName() || s->getSize() == 0) continue;
      fmt::print(file_, "{:x} {:x} {}:{}\n", s->getAddress().getValue(), s->getSize(), g.getName(), s->getName().str());
    }
    std::fflush(file_);  // perf may read it while the process still runs
  }

  std::mutex mu_;
  std::FILE* file_;
};

}  // namespace

void add_perf_map_if_asked(orc::LLJIT& jit) {
  const char* e = std::getenv("AG_PERF_MAP");
  if (!e || !*e || std::string_view(e) == "0") return;
  if (std::string_view(e) != "1") throw ValueError(fmt::format("AG_PERF_MAP={}: expected 1 (write /tmp/perf-<pid>.map) or 0", e));
  auto* layer = llvm::dyn_cast<orc::ObjectLinkingLayer>(&jit.getObjLinkingLayer());
  if (!layer) {
    detail::log_line("agc: AG_PERF_MAP=1: this JIT does not link with JITLink; no perf map is written");
    return;
  }
  const std::string path = fmt::format("/tmp/perf-{}.map", ::getpid());
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (!file) {
    detail::log_line(fmt::format("agc: AG_PERF_MAP=1: cannot open {}; no perf map is written", path));
    return;
  }
  layer->addPlugin(std::make_unique<PerfMapPlugin>(file));
}

}  // namespace ag::jit
