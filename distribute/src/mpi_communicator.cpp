// The MPI engine of ag::distribute (Open MPI on Debian). Each collective first agrees with the
// other processes on what is being called -- a nonblocking all-reduce of the call's fingerprint,
// polled against a deadline -- and only then moves the data with the blocking collective (MPI's
// tuned algorithms; its nonblocking ones run 2-2.5x slower here). So a process that died, hangs
// or runs other code is a DeadlineExceededError on the others, and two processes calling
// different collectives (another shape, dtype or root) an InvalidArgumentError naming both,
// never a hang or garbage. docs/distributed.md, "Failures".
#include "mpi_communicator.h"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <thread>

namespace ag::distribute::detail {
namespace {

MPI_Datatype mpi_type(DType d) {
  switch (d) {
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::Int32: return MPI_INT32_T;
    case DType::Int64: return MPI_INT64_T;
    default: throw InternalError(fmt::format("ag::distribute: no MPI type for {}", dtype_name(d)));
  }
}

MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return MPI_SUM;
    case ReduceOp::max: return MPI_MAX;
    case ReduceOp::min: return MPI_MIN;
    case ReduceOp::mean: break;  // the runtime sums and divides
  }
  throw InternalError("ag::distribute: no MPI op for mean");
}

// MPI counts are ints: larger buffers go in pieces.
constexpr int64_t kMaxCount = INT_MAX / 2;

}  // namespace

MpiCommunicator::MpiCommunicator(std::chrono::milliseconds timeout) : timeout_(timeout) {
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

void MpiCommunicator::agree(const ag::detail::CollectiveCall& call) {
  if (!broken_.empty())
    throw DeadlineExceededError(fmt::format("ag::distribute: {}: an earlier collective failed, so the processes are "
                                            "out of step: {}",
                                            call.describe(), broken_));
  // max over processes of {h, ~h}: every process called the same iff max(h) == ~max(~h) == min(h).
  const uint64_t h = call.fingerprint();
  uint64_t words[2] = {h, ~h};
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, words, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD, &request);
  wait(request, call);
  if (words[0] != ~words[1]) mismatch(call);
}

void MpiCommunicator::wait(MPI_Request& request, const ag::detail::CollectiveCall& call) {
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t spins = 0;; ++spins) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (spins < 1000) continue;
    std::this_thread::yield();  // oversubscribed machines: let the other processes run
    if (spins % 64 != 0 || std::chrono::steady_clock::now() - start < timeout_) continue;
    // The request stays pending: this process cannot take part in collectives any more, and
    // finalize() aborts the job instead of waiting for the others (docs/distributed.md).
    broken_ = fmt::format("process {} of {} waited {} s in {} for the others to join (AG_DISTRIBUTE_TIMEOUT): "
                          "one of them died, hangs, or runs different code",
                          rank_, size_, std::chrono::duration<double>(timeout_).count(), call.describe());
    throw DeadlineExceededError("ag::distribute: " + broken_);
  }
}

// Every process is here (the agreement completed): gather each one's description and raise the
// same error everywhere.
void MpiCommunicator::mismatch(const ag::detail::CollectiveCall& call) {
  constexpr size_t kText = 240;
  char mine[kText] = {};
  std::strncpy(mine, call.describe().c_str(), kText - 1);
  std::vector<char> all(kText * static_cast<size_t>(size_));
  MPI_Allgather(mine, kText, MPI_CHAR, all.data(), kText, MPI_CHAR, MPI_COMM_WORLD);
  std::string text;
  for (int r = 0; r < size_; ++r)
    text += fmt::format("\n  process {}: {}", r, std::string(all.data() + static_cast<size_t>(r) * kText));
  throw InvalidArgumentError("ag::distribute: the processes called different collectives (every process must make "
                             "the same calls, in the same order, with the same shapes):" + text);
}

void MpiCommunicator::all_reduce(const ag::detail::CollectiveCall& call, const void* in, void* out, int64_t count) {
  std::lock_guard lock(mu_);
  agree(call);
  const MPI_Datatype type = mpi_type(call.dtype);
  const size_t size = dtype_size(call.dtype);
  for (int64_t done = 0; done < count; done += kMaxCount) {
    const int n = static_cast<int>(std::min(kMaxCount, count - done));
    void* dst = static_cast<char*>(out) + static_cast<size_t>(done) * size;
    const void* src = in == out ? MPI_IN_PLACE : static_cast<const char*>(in) + static_cast<size_t>(done) * size;
    MPI_Allreduce(src, dst, n, type, mpi_op(call.op), MPI_COMM_WORLD);
  }
}

void MpiCommunicator::broadcast(const ag::detail::CollectiveCall& call, void* data, int64_t bytes) {
  std::lock_guard lock(mu_);
  agree(call);
  for (int64_t done = 0; done < bytes; done += kMaxCount)
    MPI_Bcast(static_cast<char*>(data) + done, static_cast<int>(std::min(kMaxCount, bytes - done)), MPI_BYTE, call.root,
              MPI_COMM_WORLD);
}

void MpiCommunicator::all_gather(const ag::detail::CollectiveCall& call, const void* in, void* out, int64_t bytes) {
  std::lock_guard lock(mu_);
  agree(call);
  if (bytes > kMaxCount)
    throw InvalidArgumentError(fmt::format("ag::distribute: {}: {} bytes per process is more than one MPI_Allgather "
                                           "moves ({})",
                                           call.describe(), bytes, kMaxCount));
  MPI_Allgather(in, static_cast<int>(bytes), MPI_BYTE, out, static_cast<int>(bytes), MPI_BYTE, MPI_COMM_WORLD);
}

void MpiCommunicator::barrier(const ag::detail::CollectiveCall& call) {
  std::lock_guard lock(mu_);
  agree(call);  // completes only when every process has joined: a barrier with a deadline
}

}  // namespace ag::distribute::detail
