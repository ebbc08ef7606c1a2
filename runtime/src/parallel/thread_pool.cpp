// The shared thread pool: Eigen's NonBlockingThreadPool (the pool under TensorFlow's CPU
// runtime: per-thread work-stealing queues, spinning before sleeping), sized by
// ag::set_num_threads or AG_NUM_THREADS. Why this one and not oneTBB or OpenMP: docs/jit.md.
#define EIGEN_USE_THREADS
#include <sched.h>

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>
#include <unsupported/Eigen/CXX11/ThreadPool>

#include "ag/detail/fork_safety.h"
#include "ag/detail/gemm_halves.h"
#include "ag/detail/loop_splits.h"
#include "ag/detail/parallel.h"
#include "ag/error.h"
#include "ag/platform.h"

namespace ag::detail {
namespace {

// The CPUs this process may run on (its affinity mask, e.g. under taskset or a container's
// cpuset), which hardware_concurrency() ignores.
int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

int threads_from_env() {
  const char* s = std::getenv("AG_NUM_THREADS");
  if (!s || !*s) return available_cpus();
  char* end = nullptr;
  const long n = std::strtol(s, &end, 10);
  if (*end || n < 1 || n > 1024)
    throw ValueError(fmt::format("AG_NUM_THREADS={}: expected a number of threads from 1 to 1024", s));
  return static_cast<int>(n);
}

// A worker that has run its chunks of a split loop lingers, spinning, for kLinger in case
// another split loop comes: the caller hands it the loop through its slot instead of the pool's
// queue. A vCPU that went to sleep takes ~25 us to wake on a 2-vCPU VM, and a split loop every
// ~60 us (an LSTM step's halved product) found its worker asleep every time: the caller claimed
// both halves itself and paid the wake-up besides (2 threads 1.3x slower than 1). A slot goes
// Away -> Idle (the worker lingers) -> Claimed (a caller is writing `job`) -> Offered -> Away
// (the worker runs the job, then lingers again); a worker whose linger ends moves it Idle -> Away.
struct LingerSlot {
  enum : int { kAway, kIdle, kClaimed, kOffered };
  std::atomic<int> state{kAway};
  std::function<void()> job;  // written by the caller that claimed the slot, read by its worker
};
constexpr auto kLinger = std::chrono::microseconds(200);
// kLinger, or AG_POOL_LINGER_US (0: workers go straight back to the pool, which sleeps them
// after its own short spin). Read with AG_NUM_THREADS (ensure_threads), so that a bad value is
// a ValueError where errors can be raised, never on a worker.
std::chrono::microseconds linger_from_env() {
  const char* e = std::getenv("AG_POOL_LINGER_US");
  if (!e || !*e) return kLinger;
  char* end = nullptr;
  const long us = std::strtol(e, &end, 10);
  if (*end || us < 0 || us > 1000000)
    throw ValueError(fmt::format("AG_POOL_LINGER_US={}: expected microseconds from 0 to 1000000", e));
  return std::chrono::microseconds(us);
}
std::atomic<int64_t> g_linger_us{-1};  // -1: not read yet
std::chrono::microseconds linger_time() { return std::chrono::microseconds(g_linger_us.load(std::memory_order_relaxed)); }

// The pool's workers and their slots; the slots outlive the workers (members are destroyed in
// reverse order: the pool joins its workers first).
struct WorkerPool {
  explicit WorkerPool(int workers) : slots(static_cast<size_t>(workers)), pool(workers) {}
  std::vector<LingerSlot> slots;
  // Tasks scheduled on the pool and not started: a lingering worker leaves for them.
  std::atomic<int> queued{0};
  Eigen::ThreadPool pool;
};

struct PoolState {
  std::mutex mu;  // guards pool replacement
  std::shared_ptr<WorkerPool> pool;  // threads - 1 workers: the caller runs a chunk too
  std::atomic<int> threads{0};       // 0: not read from the environment yet
};

// In a child of fork() the pool's workers do not exist: the child gets a fresh state (the same
// size), whose pool is made at its first parallel loop; the parent's is left behind, never
// destroyed (its destructor would wait for those workers).
void fresh_state_after_fork();

PoolState*& state_ptr() {
  static PoolState* s = [] {
    set_fork_hooks(ForkStage::ThreadPool, nullptr, nullptr, fresh_state_after_fork);
    return new PoolState;  // never destroyed: kernels may run during static destruction
  }();
  return s;
}
PoolState& state() { return *state_ptr(); }

void fresh_state_after_fork() {
  auto* fresh = new PoolState;
  fresh->threads.store(state().threads.load(std::memory_order_relaxed), std::memory_order_relaxed);
  state_ptr() = fresh;
}

int ensure_threads() {
  PoolState& s = state();
  int n = s.threads.load(std::memory_order_acquire);
  if (n > 0) return n;
  std::lock_guard lock(s.mu);
  n = s.threads.load(std::memory_order_relaxed);
  if (n == 0) {
    g_linger_us.store(linger_from_env().count(), std::memory_order_relaxed);
    read_gemm_halves_mode_from_env();
    read_loop_splits_mode_from_env();
    n = threads_from_env();
    s.threads.store(n, std::memory_order_release);
  }
  return n;
}

std::shared_ptr<WorkerPool> current_pool(int threads) {
  PoolState& s = state();
  std::lock_guard lock(s.mu);
  if (!s.pool || s.pool->pool.NumThreads() != threads - 1) s.pool = std::make_shared<WorkerPool>(threads - 1);
  return s.pool;
}

std::atomic<int64_t> g_split{0};
std::atomic<int64_t> g_lingered{0};

// Chunks per thread of a split loop: enough that a late worker costs the caller little, few enough
// that a chunk's start is noise.
constexpr int64_t kChunksPerThread = 4;
// How long the caller spins for the workers' last chunks before it sleeps: sleeping hands the
// vCPU back to the hypervisor, and waking it took ~25 us on a 2-vCPU VM (the whole gain of a
// split 1 MB loop); the workers' last chunks are at most a few grains away.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(200);

// The claim counters of one split loop: per participant's block, its next chunk; and the chunks
// finished.
struct SplitCounters {
  SplitCounters(int64_t participants, int64_t chunks) : next(static_cast<size_t>(participants)) {
    for (int64_t b = 0; b < participants; ++b) next[static_cast<size_t>(b)].store(block_begin(b, participants, chunks));
  }
  // The first chunk of block b (b = participants: the end).
  static int64_t block_begin(int64_t b, int64_t participants, int64_t chunks) { return b * chunks / participants; }
  std::vector<std::atomic<int64_t>> next;
  std::atomic<int64_t> done{0};
};

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

void wait_for(std::atomic<int64_t>& count, int64_t target) {
  const auto until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
  for (int spins = 0;; ++spins) {
    if (count.load(std::memory_order_acquire) == target) return;
    cpu_relax();
    if (spins % 64 == 63 && std::chrono::steady_clock::now() > until) break;
  }
  for (int64_t c = count.load(std::memory_order_acquire); c != target; c = count.load(std::memory_order_acquire)) count.wait(c);
}

// The rest of a worker's task after its chunks: spin for a job offered through its slot, run it,
// linger again; leave after kLinger without one, or as soon as the pool has tasks queued.
void linger(WorkerPool& wp, LingerSlot& slot) {
  if (linger_time().count() <= 0) return;
  slot.state.store(LingerSlot::kIdle, std::memory_order_release);
  auto until = std::chrono::steady_clock::now() + linger_time();
  for (int spins = 0;; ++spins) {
    if (slot.state.load(std::memory_order_acquire) == LingerSlot::kOffered) {
      const std::function<void()> job = std::move(slot.job);
      slot.job = nullptr;
      slot.state.store(LingerSlot::kAway, std::memory_order_release);
      g_lingered.fetch_add(1, std::memory_order_relaxed);
      job();
      slot.state.store(LingerSlot::kIdle, std::memory_order_release);
      until = std::chrono::steady_clock::now() + linger_time();
      continue;
    }
    cpu_relax();
    if (spins % 64 == 63 &&
        (wp.queued.load(std::memory_order_relaxed) > 0 || std::chrono::steady_clock::now() > until)) {
      int idle = LingerSlot::kIdle;
      if (slot.state.compare_exchange_strong(idle, LingerSlot::kAway, std::memory_order_acq_rel)) return;
      // A caller claimed the slot meanwhile: its job is on the way.
    }
  }
}

// Hands `job` to a lingering worker: true if one took it.
bool offer_to_lingering(WorkerPool& wp, std::function<void()>& job) {
  for (LingerSlot& slot : wp.slots) {
    int idle = LingerSlot::kIdle;
    if (slot.state.load(std::memory_order_relaxed) != idle ||
        !slot.state.compare_exchange_strong(idle, LingerSlot::kClaimed, std::memory_order_acq_rel))
      continue;
    slot.job = std::move(job);
    slot.state.store(LingerSlot::kOffered, std::memory_order_release);
    return true;
  }
  return false;
}

}  // namespace

int64_t parallel_loops_lingered() { return g_lingered.load(std::memory_order_relaxed); }

int64_t parallel_loops_split() { return g_split.load(std::memory_order_relaxed); }

int parallel_threads() { return ensure_threads(); }

bool parallel_for_would_split(int64_t n, int64_t grain) {
  const int threads = ensure_threads();
  return threads > 1 && n >= 2 * grain && current_pool(threads)->pool.CurrentThreadId() < 0;
}

void parallel_for_erased(int64_t n, int64_t grain, RangeFn fn, void* closure, int64_t unit) {
  const int threads = ensure_threads();
  std::shared_ptr<WorkerPool> pool;
  if (threads > 1 && n >= 2 * grain) pool = current_pool(threads);
  // Serial, or nested (a chunk that itself calls parallel_for): the caller does it all.
  if (!pool || pool->pool.CurrentThreadId() >= 0) {
    if (n > 0) fn(closure, 0, n);
    return;
  }
  // Chunks of at least `grain` items, a few per thread: chunk k is [k*n/c, (k+1)*n/c), its bounds
  // rounded down to multiples of `unit` (the last one ends at n). A chunk of at least a grain keeps
  // at least grain - unit + 1 items, so none is empty. Each participant (the caller, then the
  // workers) owns a contiguous block of chunks and claims them in order; when its block is done it
  // claims what is left of the others'. On time, every thread runs its own block, the same part
  // of the data each call (a loop in a staged loop finds its half in its core's cache); a worker
  // that starts late (a vCPU woken from halt takes tens of microseconds) finds fewer chunks left
  // instead of the caller waiting for a fixed half. What a chunk computes never depends on who
  // runs it.
  const int64_t chunks = std::min<int64_t>(int64_t{threads} * kChunksPerThread, n / grain);
  const int64_t participants = std::min<int64_t>(threads, chunks);
  const int64_t step = std::max<int64_t>(1, unit);
  auto bound = [&](int64_t k) { return k == chunks ? n : k * n / chunks / step * step; };
  std::vector<std::exception_ptr> errors(static_cast<size_t>(chunks));
  // The counters outlive this call in the workers that hold them: a worker that starts after the
  // last chunk was claimed only reads the claim counters, so the caller waits for the chunks, not
  // the workers.
  const auto split = std::make_shared<SplitCounters>(participants, chunks);
  auto run_chunks = [&, chunks, participants, split = split.get()](int64_t own) {
    for (int64_t i = 0; i < participants; ++i) {
      const int64_t block = (own + i) % participants, end = SplitCounters::block_begin(block + 1, participants, chunks);
      std::atomic<int64_t>& next = split->next[static_cast<size_t>(block)];
      for (int64_t k = next.fetch_add(1, std::memory_order_relaxed); k < end; k = next.fetch_add(1, std::memory_order_relaxed)) {
        try {
          fn(closure, bound(k), bound(k + 1));
        } catch (...) {
          errors[static_cast<size_t>(k)] = std::current_exception();
        }
        if (split->done.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) split->done.notify_one();
      }
    }
  };
  g_split.fetch_add(1, std::memory_order_relaxed);
  WorkerPool* wp = pool.get();
  for (int64_t p = 1; p < participants; ++p) {
    std::function<void()> job = [split, run_chunks, p] {
      follow_denormal_mode();
      run_chunks(p);
    };
    if (offer_to_lingering(*wp, job)) continue;
    wp->queued.fetch_add(1, std::memory_order_relaxed);
    wp->pool.Schedule([wp, job = std::move(job)] {
      wp->queued.fetch_sub(1, std::memory_order_relaxed);
      job();
      // Eigen runs a task on the scheduling thread itself when its queue push fails: no worker,
      // no slot (slots[-1] corrupted the heap, 1 in ~25 runs of the runtime tests).
      if (const int worker = wp->pool.CurrentThreadId(); worker >= 0) linger(*wp, wp->slots[static_cast<size_t>(worker)]);
    });
  }
  run_chunks(0);
  wait_for(split->done, chunks);
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace ag::detail

namespace ag {

void set_num_threads(int n) {
  if (n < 1 || n > 1024) throw ValueError(fmt::format("set_num_threads({}): expected 1 to 1024 threads", n));
  if (detail::g_linger_us.load(std::memory_order_relaxed) < 0)
    detail::g_linger_us.store(detail::linger_from_env().count(), std::memory_order_relaxed);
  detail::PoolState& s = detail::state();
  std::lock_guard lock(s.mu);
  s.threads.store(n, std::memory_order_release);  // the pool is rebuilt at its next use
}

int get_num_threads() { return detail::ensure_threads(); }

}  // namespace ag
