// Data-parallel training: each process trains on its shard of the batch and averages gradients
// with all_reduce_gradients inside the compiled step (forward, backward, all-reduce, update in
// one Function). After every step the weights equal those of one process training on the whole
// batch (to float tolerance), whatever the number of processes.
#include "distribute_test_util.h"

namespace {

using ag::Tensor;

constexpr int kBatch = 24;  // divisible by 1, 2 and 3 processes

struct Mlp {
  ag::Variable w1, b1, w2, b2;
  explicit Mlp(uint64_t seed)
      : w1(ag::random_normal({4, 16}, ag::float32, 0, 0.5, seed), "w1"), b1(ag::zeros({16}), "b1"),
        w2(ag::random_normal({16, 3}, ag::float32, 0, 0.5, seed + 1), "w2"), b2(ag::zeros({3}), "b2") {}
  std::vector<ag::Variable*> variables() { return {&w1, &b1, &w2, &b2}; }
  Tensor loss(const Tensor& x, const Tensor& labels) {
    const Tensor logits = ag::matmul(ag::tanh(ag::matmul(x, w1) + b1), w2) + b2;
    return ag::reduce_mean(ag::nn::softmax_cross_entropy_with_logits(labels, logits));
  }
  // One SGD step; `distributed`: the gradients averaged over the processes first.
  Tensor step(ag::optimizers::Optimizer& opt, const Tensor& x, const Tensor& labels, bool distributed) {
    ag::GradientTape tape;
    const Tensor loss_value = loss(x, labels);
    const std::vector<Tensor> g = tape.gradient(loss_value, {w1, b1, w2, b2});
    std::vector<std::pair<Tensor, ag::Variable*>> pairs = {{g[0], &w1}, {g[1], &b1}, {g[2], &w2}, {g[3], &b2}};
    if (distributed) pairs = ag::distribute::all_reduce_gradients(pairs);
    opt.apply_gradients(pairs);
    return distributed ? ag::distribute::all_reduce(loss_value, ag::distribute::ReduceOp::mean) : loss_value;
  }
};

std::pair<Tensor, Tensor> whole_batch() {
  const Tensor x = ag::random_uniform({kBatch, 4}, ag::float32, -1, 1, 11);
  const Tensor labels = ag::one_hot(ag::cast(ag::range(kBatch), ag::int32) % 3, 3);
  return {x, labels};
}

void expect_data_parallel_equals_whole_batch(bool compiled) {
  const int n = ag::distribute::world_size(), r = ag::distribute::rank();
  const auto [x, labels] = whole_batch();
  const int64_t rows = kBatch / n;
  const Tensor my_x = ag::slice(x, {r * rows, 0}, {rows, 4}), my_labels = ag::slice(labels, {r * rows, 0}, {rows, 3});

  Mlp reference(100);      // process 0's initial weights, known here without a message
  Mlp model(100 + 7 * r);  // every process starts elsewhere...
  const std::vector<ag::Variable*> vars = model.variables();
  ag::distribute::broadcast_variables(vars, 0);  // ...until process 0's weights are broadcast
  ag::optimizers::SGD ref_opt(0.5, 0.9), opt(0.5, 0.9);
  auto ref_step = ag::function([&](Tensor xs, Tensor ls) { return reference.step(ref_opt, xs, ls, false); });
  auto dp_step = ag::function([&](Tensor xs, Tensor ls) { return model.step(opt, xs, ls, true); });
  for (int i = 0; i < 8; ++i) {
    const Tensor ref_loss = compiled ? ref_step(x, labels) : reference.step(ref_opt, x, labels, false);
    const Tensor loss = compiled ? dp_step(my_x, my_labels) : model.step(opt, my_x, my_labels, true);
    agtest::expect_same(ref_loss, loss, {1e-5, 1e-6}, fmt::format("loss of step {}", i));
  }
  const std::vector<ag::Variable*> ref_vars = reference.variables();
  for (size_t k = 0; k < vars.size(); ++k)
    agtest::expect_same(ref_vars[k]->value(), vars[k]->value(), {1e-4, 1e-5}, "weights " + ref_vars[k]->name());
  if (compiled) {
    // Tensor fusion ran: one all-reduce for the four gradients and one for the loss.
    const std::string graph = dp_step.get_concrete_function(my_x, my_labels).graph_text();
    EXPECT_EQ(agtest::count_of(graph, "AllReduce("), 2) << graph;
    EXPECT_EQ(dp_step.tracing_count(), 1);
  }
}

TEST(DistributeTraining, EagerStepsEqualOneProcessOnTheWholeBatch) { expect_data_parallel_equals_whole_batch(false); }
TEST(DistributeTraining, CompiledStepsEqualOneProcessOnTheWholeBatch) { expect_data_parallel_equals_whole_batch(true); }

}  // namespace
