// Data-parallel training on several processes (Horovod's recipe, torch's DistributedDataParallel):
// the MLP of train_mlp on two spirals, each process training on its shard of the points. The
// weights start equal (broadcast from process 0), and one compiled Function per step does the
// forward, the backward, the all-reduce that averages the gradients across processes (fused
// into one buffer) and the update -- so every process holds the same weights after every step.
//
//   mpirun -np 2 build/samples/train_data_parallel       (docs/distributed.md: more machines)
#include <ag/ag.h>

#include <cmath>
#include <vector>

using ag::Tensor;

// Two spirals of `n` points each, labels one-hot ([2n, 2]); process `rank` of `size` keeps the
// points rank, rank + size, ... (each process an equal share of both classes).
std::pair<Tensor, Tensor> spirals_shard(int n, int rank, int size) {
  std::vector<float> xy, onehot;
  for (int label = 0; label < 2; ++label)
    for (int i = rank; i < n; i += size) {
      const float r = 0.15f + 0.85f * static_cast<float>(i) / static_cast<float>(n);
      const float a = 2.5f * r * 3.14159265f + (label ? 3.14159265f : 0.0f);
      xy.insert(xy.end(), {r * std::cos(a), r * std::sin(a)});
      onehot.insert(onehot.end(), {label == 0 ? 1.0f : 0.0f, label == 1 ? 1.0f : 0.0f});
    }
  const int64_t rows = static_cast<int64_t>(onehot.size() / 2);
  return {ag::constant(xy, {rows, 2}), ag::constant(onehot, {rows, 2})};
}

int main() {
  ag::distribute::init();  // from mpirun's environment; run alone, this is one process
  const int rank = ag::distribute::rank(), size = ag::distribute::world_size();
  const auto [points, labels] = spirals_shard(100, rank, size);

  // Each process draws its own initial weights; broadcasting process 0's makes them equal.
  const uint64_t seed = 10 * static_cast<uint64_t>(rank);
  ag::Variable w1(ag::random_normal({2, 32}, ag::float32, 0, 1.0, seed + 1), "w1"), b1(ag::zeros({32}), "b1");
  ag::Variable w2(ag::random_normal({32, 32}, ag::float32, 0, 0.3, seed + 2), "w2"), b2(ag::zeros({32}), "b2");
  ag::Variable w3(ag::random_normal({32, 2}, ag::float32, 0, 0.3, seed + 3), "w3"), b3(ag::zeros({2}), "b3");
  std::vector<ag::Variable*> vars = {&w1, &b1, &w2, &b2, &w3, &b3};
  ag::distribute::broadcast_variables(vars, 0);

  auto logits_of = [&](const Tensor& p) {
    const Tensor h1 = ag::tanh(ag::matmul(p, w1) + b1);
    const Tensor h2 = ag::tanh(ag::matmul(h1, w2) + b2);
    return ag::matmul(h2, w3) + b3;
  };
  ag::optimizers::Adam adam(0.02);
  auto train_step = ag::function([&](Tensor p, Tensor l) {
    ag::GradientTape tape;
    const Tensor loss = ag::reduce_mean(ag::nn::softmax_cross_entropy_with_logits(l, logits_of(p)));
    const std::vector<Tensor> g = tape.gradient(loss, {w1, b1, w2, b2, w3, b3});
    // The mean over processes of each shard's gradient: the gradient of the whole batch.
    adam.apply_gradients(ag::distribute::all_reduce_gradients(
        {{g[0], &w1}, {g[1], &b1}, {g[2], &w2}, {g[3], &b2}, {g[4], &w3}, {g[5], &b3}}));
    return ag::distribute::all_reduce(loss, ag::distribute::ReduceOp::mean);
  }, {.name = "train_step"});
  // The accuracy over every process's points: correct answers and counts summed across them.
  auto accuracy = ag::function([&](Tensor p, Tensor l) {
    const Tensor right = ag::reduce_sum(ag::cast(ag::equal(ag::argmax(logits_of(p), 1), ag::argmax(l, 1)), ag::float32));
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
  for (ag::Variable* v : vars) {
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
