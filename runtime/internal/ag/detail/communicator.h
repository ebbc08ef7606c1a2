// The engine under ag::distribute: what a collective asks of the processes. The runtime ships the
// single-process one; agc::distribute installs MPI's (distribute/src/mpi_communicator.cpp). The
// runtime and the JIT call it through here, so neither links MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "ag/distribute.h"
#include "ag/dtype.h"
#include "ag/error.h"
#include "ag/graph/graph.h"
#include "ag/shape.h"

namespace ag::detail {

enum class CollectiveKind : uint8_t { AllReduce, Broadcast, AllGather, Barrier };

// What one process calls: every process must make the same call, in the same order. An engine
// compares these across processes before it moves data, so that a mismatch is an error that
// names both sides rather than a hang or garbage.
struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::AllReduce;
  distribute::ReduceOp op = distribute::ReduceOp::sum;  // AllReduce
  DType dtype = DType::Float32;
  Shape shape;   // this process's operand
  int root = 0;  // Broadcast
  SourceLoc loc;

  // "all_reduce(sum) of float32[4] (at f.cpp:12)"
  std::string describe() const;
  // The fields every process must agree on, hashed.
  uint64_t fingerprint() const;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Element-wise reduction of `count` elements of call.dtype (sum/max/min; the runtime divides
  // for mean) from `in` into `out`; `in == out` reduces in place.
  virtual void all_reduce(const CollectiveCall& call, const void* in, void* out, int64_t count) = 0;
  // `bytes` bytes of `data` from call.root to every process, in place.
  virtual void broadcast(const CollectiveCall& call, void* data, int64_t bytes) = 0;
  // `bytes` bytes from each process, into `out` (size() * bytes) in rank order.
  virtual void all_gather(const CollectiveCall& call, const void* in, void* out, int64_t bytes) = 0;
  virtual void barrier(const CollectiveCall& call) = 0;
};

// The installed engine (the single-process one until agc::distribute's init() installs MPI's).
Communicator& communicator();
// Replaces the engine; null puts the single-process one back. Not thread-safe against
// collectives running at the same time (init() and finalize() are called from main()).
void install_communicator(std::unique_ptr<Communicator> c);

// Runs a collective node (the eager kernel, which the interpreter and compiled code call).
// `out` has the node's result type.
void run_collective(OpKind op, const Attrs& attrs, SourceLoc loc, DType dtype, const Shape& in_shape, const void* in,
                    void* out);
// The same on tensors: the eager kernel of AllReduce, CollectiveBroadcast and AllGather.
Tensor collective_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& type,
                         SourceLoc loc);
// Stages (or runs eagerly) a collective; `slot` is Attrs::axis: the ReduceOp, the root, or the
// number of processes an all_gather was staged for.
Tensor stage_collective(OpKind op, const Tensor& t, int64_t slot, SourceLoc loc);

}  // namespace ag::detail
