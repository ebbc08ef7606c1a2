// ag::distribute::init() / finalize(): joining the processes a launcher started (mpirun), or
// staying a single process without one, and leaving MPI at exit.
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "mpi_communicator.h"

namespace ag::distribute {
namespace {

// What the launchers MPI programs run under set in each process's environment (Open MPI's
// mpirun, PMIx and Hydra/PMI launchers); without them MPI_Init would start a "singleton" job
// of one process, which takes a third of a second and gives nothing.
bool launched_by_mpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(var)) return true;
  return false;
}

// AG_DISTRIBUTE_TIMEOUT: seconds a collective waits for the other processes (default 300).
std::chrono::milliseconds timeout_from_env() {
  const char* text = std::getenv("AG_DISTRIBUTE_TIMEOUT");
  if (!text || !*text) return std::chrono::seconds(300);
  char* end = nullptr;
  const double seconds = std::strtod(text, &end);
  if (*end != '\0' || !(seconds > 0))
    throw ValueError(fmt::format("AG_DISTRIBUTE_TIMEOUT={}: expected a positive number of seconds", text));
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

// After finalize(): the process keeps its rank, and a collective is an error, not a silent
// single-process copy.
class Finalized final : public ag::detail::Communicator {
 public:
  Finalized(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_reduce(const ag::detail::CollectiveCall& c, const void*, void*, int64_t) override { fail(c); }
  void broadcast(const ag::detail::CollectiveCall& c, void*, int64_t) override { fail(c); }
  void all_gather(const ag::detail::CollectiveCall& c, const void*, void*, int64_t) override { fail(c); }
  void barrier(const ag::detail::CollectiveCall& c) override { fail(c); }

 private:
  [[noreturn]] static void fail(const ag::detail::CollectiveCall& c) {
    throw InvalidArgumentError(fmt::format("ag::distribute: {} after ag::distribute::finalize()", c.describe()));
  }
  int rank_, size_;
};

std::mutex g_mu;
detail::MpiCommunicator* g_mpi = nullptr;  // owned by the runtime's installed engine
bool g_we_initialized = false;

}  // namespace

void init() {
  std::lock_guard lock(g_mu);
  if (g_mpi || !launched_by_mpi()) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) throw ValueError("ag::distribute::init(): MPI was finalized already; it cannot start again");
  const auto timeout = timeout_from_env();
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    g_we_initialized = true;
  }
  auto engine = std::make_unique<detail::MpiCommunicator>(timeout);
  g_mpi = engine.get();
  ag::detail::install_communicator(std::move(engine));
  static const bool registered = std::atexit([] { finalize(); }) == 0;
  (void)registered;
}

void finalize() {
  std::lock_guard lock(g_mu);
  if (!g_mpi) return;
  const std::string broken = g_mpi->broken();
  ag::detail::install_communicator(std::make_unique<Finalized>(g_mpi->rank(), g_mpi->size()));
  g_mpi = nullptr;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized || !g_we_initialized) return;
  if (!broken.empty()) {
    // A collective of this process is still pending: MPI_Finalize would wait for the others
    // forever. Ending the whole job is the only exit that never hangs.
    std::fprintf(stderr, "agc: ag::distribute: aborting the job: %s\n", broken.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
}

}  // namespace ag::distribute
