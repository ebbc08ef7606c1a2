// Gradient rules of the collectives (ag/distribute.h). Every process runs the same program, so
// the loss is the sum of the processes' losses and a value one process sends reaches every
// other: its gradient is the sum of theirs, an all-reduce again (TensorFlow's and Horovod's
// rules). The rules run collectives themselves, so every process must take the gradient too.
#include "ag/construct.h"
#include "ag/detail/communicator.h"
#include "ag/detail/ops_internal.h"
#include "rules.h"

namespace ag::detail {
namespace {

Tensor all_reduced(const GradContext& c, distribute::ReduceOp op) {
  return stage_collective(OpKind::AllReduce, c.dys[0], static_cast<int64_t>(op), c.loc);
}

}  // namespace

// sum -> sum of the gradients; mean -> their mean; max/min -> the summed gradient where this
// process's value is the extremum (every process holding it, on a tie, as reduce_max's rule).
std::vector<Tensor> grad_all_reduce(const GradContext& c) {
  const auto op = static_cast<distribute::ReduceOp>(c.attrs.axis);
  if (op == distribute::ReduceOp::sum || op == distribute::ReduceOp::mean) return {all_reduced(c, op)};
  return {where(equal(c.inputs[0], c.outputs[0]), all_reduced(c, distribute::ReduceOp::sum), zeros_like(c.dys[0]))};
}

// Only the root's value went anywhere: it gets the sum of every process's gradient.
std::vector<Tensor> grad_collective_broadcast(const GradContext& c) {
  Tensor s = all_reduced(c, distribute::ReduceOp::sum);
  return {distribute::rank() == c.attrs.axis ? s : zeros_like(s)};
}

// This process's rows of the summed gradient of the gathered value.
std::vector<Tensor> grad_all_gather(const GradContext& c) {
  const Shape x = c.inputs[0].shape();
  if (x.rank() < 1 || x[0] < 0)
    throw UnimplementedError("the gradient of ag::distribute::all_gather needs the first dim known while tracing" +
                             at(c.loc));
  std::vector<int64_t> begin(static_cast<size_t>(x.rank()), 0), size(static_cast<size_t>(x.rank()), -1);
  begin[0] = distribute::rank() * x[0];
  size[0] = x[0];
  return {slice(all_reduced(c, distribute::ReduceOp::sum), begin, size)};
}

}  // namespace ag::detail
