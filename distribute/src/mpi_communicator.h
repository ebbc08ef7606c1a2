// ag::distribute's engine on MPI (mpi_communicator.cpp); init.cpp installs it.
#pragma once

#include <mpi.h>

#include <chrono>
#include <mutex>
#include <string>

#include "ag/detail/communicator.h"

namespace ag::distribute::detail {

class MpiCommunicator final : public ag::detail::Communicator {
 public:
  explicit MpiCommunicator(std::chrono::milliseconds timeout);
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_reduce(const ag::detail::CollectiveCall& call, const void* in, void* out, int64_t count) override;
  void broadcast(const ag::detail::CollectiveCall& call, void* data, int64_t bytes) override;
  void all_gather(const ag::detail::CollectiveCall& call, const void* in, void* out, int64_t bytes) override;
  void barrier(const ag::detail::CollectiveCall& call) override;
  // Why the processes are out of step ("" while they are not): a collective timed out.
  const std::string& broken() const { return broken_; }

 private:
  // Raises unless every process makes the same call (see the .cpp).
  void agree(const ag::detail::CollectiveCall& call);
  void wait(MPI_Request& request, const ag::detail::CollectiveCall& call);
  [[noreturn]] void mismatch(const ag::detail::CollectiveCall& call);

  int rank_ = 0, size_ = 1;
  std::chrono::milliseconds timeout_;
  // MPI is initialized for one thread at a time (MPI_THREAD_SERIALIZED).
  std::mutex mu_;
  std::string broken_;
};

}  // namespace ag::distribute::detail
