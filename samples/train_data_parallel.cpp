// Data-parallel training on several processes (Horovod's recipe, torch's DistributedDataParallel):
// the MLP of train_mlp on two spirals, each process training on its shard of the points. The
// weights start equal (broadcast from process 0), and one compiled Function per step does the
// forward, the backward, the all-reduce that averages the gradients across processes (fused
// into one buffer) and the update -- so every process holds the same weights after every step.
//
//   mpirun -np 2 build/samples/train_data_parallel       (docs/distributed.md: more machines)
#include <ag/ag.h>

#include <vector>

#include "deploy/spirals.h"  // the points and the MLP (the deploy sample's)

using ag::Tensor;

int main() {
  ag::distribute::init();  // from mpirun's environment; run alone, this is one process
  const int rank = ag::distribute::rank(), size = ag::distribute::world_size();
  const auto [points, labels] = two_spirals(100, 0.0f, rank, size);

  // Each process draws its own initial weights; broadcasting process 0's makes them equal.
  SpiralMlp mlp(10 * static_cast<uint64_t>(rank));
  ag::distribute::broadcast_variables(mlp.variables(), 0);

  ag::optimizers::Adam adam(0.02);
  auto train_step = ag::function([&](Tensor p, Tensor l) {
    ag::GradientTape tape;
    const Tensor loss = ag::reduce_mean(ag::nn::softmax_cross_entropy_with_logits(l, mlp.logits(p)));
    // The mean over processes of each shard's gradient: the gradient of the whole batch.
    adam.apply_gradients(ag::distribute::all_reduce_gradients(mlp.with_gradients(tape.gradient(loss, mlp.sources()))));
    return ag::distribute::all_reduce(loss, ag::distribute::ReduceOp::mean);
  }, {.name = "train_step"});
  // The accuracy over every process's points: correct answers and counts summed across them.
  auto accuracy = ag::function([&](Tensor p, Tensor l) {
    const Tensor right = ag::reduce_sum(ag::cast(ag::equal(ag::argmax(mlp.logits(p), 1), ag::argmax(l, 1)), ag::float32));
    const Tensor count = Tensor(static_cast<float>(l.shape()[0]));
    return ag::distribute::all_reduce(right) / ag::distribute::all_reduce(count);
  }, {.name = "accuracy"});

  if (rank == 0) fmt::print("{} process(es), {} points each\n", size, points.shape()[0]);
  float start_loss = 0, end_loss = 0;
  for (int step = 0; step <= 600; ++step) {
    const float loss = train_step(points, labels).item<float>();
    if (step == 0) start_loss = loss;
    end_loss = loss;
    const float acc = step % 150 == 0 ? accuracy(points, labels).item<float>() : 0;  // every process calls it
    if (rank == 0 && step % 150 == 0) fmt::print("step {:>3}: loss {:.4f}, accuracy {:.3f}\n", step, loss, acc);
  }
  const float acc = accuracy(points, labels).item<float>();
  // The weights are the same everywhere: their largest difference across processes is zero.
  float spread = 0;
  for (ag::Variable* v : mlp.variables()) {
    const Tensor x = v->value();
    const Tensor d = ag::distribute::all_reduce(x, ag::distribute::ReduceOp::max) -
                     ag::distribute::all_reduce(x, ag::distribute::ReduceOp::min);
    spread = std::max(spread, ag::reduce_max(d).item<float>());
  }
  const ag::FunctionStats stats = train_step.stats();
  if (rank == 0)
    fmt::print("the loss fell: {}; accuracy above 0.9: {}; weights equal on every process: {}; train_step traced {} "
               "time(s), compiled: {}\n",
               end_loss < start_loss / 4, acc > 0.9f, spread == 0.0f, train_step.tracing_count(),
               stats.compiles + stats.disk_hits == 1);
  return 0;
}
// OUT: 2 process(es), 100 points each
// OUT: step   0: loss
// OUT: step 600: loss
// OUT: the loss fell: true; accuracy above 0.9: true; weights equal on every process: true; train_step traced 1 time(s), compiled: true
