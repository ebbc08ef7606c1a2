// More than one process: collectives over MPI (Horovod's and torch.distributed's model, tf.distribute's
// collective ops). Every process runs the same program on its own shard of the data and the
// collectives combine tensors across them; eagerly they run at once, inside a Function they are
// stateful ops of its graph (ordered, never pruned or merged) that compiled code calls.
// docs/distributed.md.
//
// The engine is MPI, in the optional target agc::distribute: `init()` lives there. A program
// that does not link it runs as a single process: world_size() is 1, rank() 0, and every
// collective returns its input's value.
#pragma once

#include <source_location>
#include <span>
#include <utility>
#include <vector>

#include "ag/tensor.h"

namespace ag {
class Variable;
}

namespace ag::distribute {

enum class ReduceOp { sum = 0, mean = 1, max = 2, min = 3 };
const char* reduce_op_name(ReduceOp op);

// Joins the processes the launcher (mpirun) started, from its environment; a process started
// without a launcher stays a single process (no MPI call). Idempotent. Defined in agc::distribute.
void init();
// Leaves MPI (also done at exit). Collectives after it raise. Defined in agc::distribute.
void finalize();

// This process's index in [0, world_size()), and the number of processes.
int rank();
int world_size();
// Blocks until every process has called barrier(). Runs when called (also while tracing: a
// barrier is not staged).
void barrier(std::source_location loc = std::source_location::current());

// The element-wise reduction of `t` over every process: each gets the same result, of `t`'s
// shape. float32, float64, int32 and int64; `mean` for floating point only. The gradient is
// the matching all-reduce of the gradients (sum -> sum, mean -> mean; max/min: the summed
// gradient where this process's value is the extremum).
Tensor all_reduce(const Tensor& t, ReduceOp op = ReduceOp::sum,
                  std::source_location loc = std::source_location::current());
// Process `root`'s value of `t`, on every process (any dtype; shapes must agree).
Tensor broadcast(const Tensor& t, int root = 0, std::source_location loc = std::source_location::current());
// Every process's `t` concatenated along the first axis, in rank order: [world_size() * d0, ...].
Tensor all_gather(const Tensor& t, std::source_location loc = std::source_location::current());

// The common case of data-parallel training: each gradient all-reduced with `op` (mean: the
// gradient of the whole batch when every process has an equal shard). Inside a Function the
// reductions are fused into one buffer per dtype when they are small (tensor fusion). A pair
// whose gradient has no value stays as it is.
std::vector<std::pair<Tensor, Variable*>> all_reduce_gradients(std::vector<std::pair<Tensor, Variable*>> grads_and_vars,
                                                               ReduceOp op = ReduceOp::mean,
                                                               std::source_location loc = std::source_location::current());
std::vector<Tensor> all_reduce_gradients(std::span<const Tensor> grads, ReduceOp op = ReduceOp::mean,
                                         std::source_location loc = std::source_location::current());
// Sets every Variable to process `root`'s value (so that training starts equal everywhere).
void broadcast_variables(std::span<Variable* const> variables, int root = 0,
                         std::source_location loc = std::source_location::current());

}  // namespace ag::distribute
