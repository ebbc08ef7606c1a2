// ag::distribute against MPI called directly from C++, in the same run (mpirun -np 2
// build/bench/distribute/bench_collectives): all-reduces of 1 MB and 16 MB from a compiled
// Function, and of 100 small tensors (agc fuses them into one buffer) against 100
// MPI_Allreduce calls and against the same fusion written by hand; then a data-parallel train
// step on every process against the same step on one process with the whole batch.
#include <ag/ag.h>
#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "bench_util.h"

namespace {

using ag::Tensor;

// Seconds per call of f, the best of `rounds` rounds of `iters` calls; every process makes the
// same calls (collectives), and a round lasts as long as its slowest process.
template <class F>
double time_collective(F&& f, int iters, int rounds = 5) {
  double best = 1e300;
  for (int r = 0; r < rounds; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) f();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    best = std::min(best, s / iters);
  }
  return best;
}

// Buffers of 2 MB huge pages (what agc's allocator gives tensors of 2 MB and more): MPI's
// shared-memory copies run up to twice as fast on them as on a std::vector's 4 KB pages, so the
// baseline is measured both ways.
struct HugeBuffer {
  float* data;
  explicit HugeBuffer(int64_t count) {
    const size_t bytes = (static_cast<size_t>(count) * sizeof(float) + (2u << 20) - 1) & ~((size_t{2} << 20) - 1);
    data = static_cast<float*>(std::aligned_alloc(size_t{2} << 20, bytes));
    madvise(data, bytes, MADV_HUGEPAGE);
    std::fill(data, data + count, 1.f);
  }
  ~HugeBuffer() { std::free(data); }
};

std::vector<agbench::Row> all_reduce_rows(int64_t count, int iters) {
  const Tensor x = ag::ones({count}, ag::float32);
  auto f = ag::function([](Tensor t) { return ag::distribute::all_reduce(t); });
  f(x);  // compile
  const double agc = time_collective([&] { agbench::keep(f(x)); }, iters);
  std::vector<float> in(static_cast<size_t>(count), 1.f), out(in.size());
  const double plain = time_collective(
      [&] { MPI_Allreduce(in.data(), out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }, iters);
  HugeBuffer huge_in(count), huge_out(count);
  const double huge = time_collective(
      [&] { MPI_Allreduce(huge_in.data, huge_out.data, static_cast<int>(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); }, iters);
  const std::string name = fmt::format("all_reduce {} MB float32, compiled", count * 4 >> 20);
  return {{name, agbench::us(agc), agbench::us(plain) + " MPI_Allreduce", fmt::format("{:.2f}x", agc / plain),
           "std::vector buffers"},
          {"  the same", agbench::us(agc), agbench::us(huge) + " MPI_Allreduce", fmt::format("{:.2f}x", agc / huge),
           "buffers of 2 MB huge pages"}};
}

// A Function returns a tuple of tensors, not a vector.
template <size_t... I>
auto as_tuple(const std::vector<Tensor>& v, std::index_sequence<I...>) {
  return std::make_tuple(v[I]...);
}

std::vector<agbench::Row> small_tensors_rows() {
  constexpr int kTensors = 100, kCount = 1000;
  std::vector<Tensor> grads;
  for (int i = 0; i < kTensors; ++i) grads.push_back(ag::ones({kCount}, ag::float32) * static_cast<float>(i));
  auto f = ag::function([](std::vector<Tensor> g) {
    return as_tuple(ag::distribute::all_reduce_gradients(g, ag::distribute::ReduceOp::sum), std::make_index_sequence<kTensors>());
  });
  f(grads);
  const double agc = time_collective([&] { agbench::keep(f(grads)); }, 200);
  std::vector<std::vector<float>> in(kTensors, std::vector<float>(kCount, 1.f)), out = in;
  const double each = time_collective([&] {
    for (int i = 0; i < kTensors; ++i) MPI_Allreduce(in[i].data(), out[i].data(), kCount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }, 50);
  std::vector<float> buffer(static_cast<size_t>(kTensors) * kCount);
  const double fused = time_collective([&] {
    for (int i = 0; i < kTensors; ++i) std::memcpy(buffer.data() + i * kCount, in[i].data(), kCount * sizeof(float));
    MPI_Allreduce(MPI_IN_PLACE, buffer.data(), kTensors * kCount, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < kTensors; ++i) std::memcpy(out[i].data(), buffer.data() + i * kCount, kCount * sizeof(float));
  }, 200);
  return {{"100 x 4 KB all_reduce_gradients, compiled (fused)", agbench::us(agc), agbench::us(each) + " 100 MPI_Allreduce",
           fmt::format("{:.2f}x", agc / each), ""},
          {"  the same", agbench::us(agc), agbench::us(fused) + " packed by hand", fmt::format("{:.2f}x", agc / fused),
           "memcpy in, one MPI_Allreduce, memcpy out"}};
}

// One SGD step of a 784-256-10 MLP on `x` (a shard, or the whole batch on one process).
struct Model {
  ag::Variable w1{ag::random_normal({784, 256}, ag::float32, 0, 0.05, 1)}, b1{ag::zeros({256})};
  ag::Variable w2{ag::random_normal({256, 10}, ag::float32, 0, 0.05, 2)}, b2{ag::zeros({10})};
  ag::optimizers::SGD sgd{0.1};
  Tensor step(const Tensor& x, const Tensor& labels, bool distributed) {
    ag::GradientTape tape;
    const Tensor logits = ag::matmul(ag::relu(ag::matmul(x, w1) + b1), w2) + b2;
    const Tensor loss = ag::reduce_mean(ag::nn::softmax_cross_entropy_with_logits(labels, logits));
    const std::vector<Tensor> g = tape.gradient(loss, {w1, b1, w2, b2});
    std::vector<std::pair<Tensor, ag::Variable*>> pairs = {{g[0], &w1}, {g[1], &b1}, {g[2], &w2}, {g[3], &b2}};
    if (distributed) pairs = ag::distribute::all_reduce_gradients(pairs);
    sgd.apply_gradients(pairs);
    return loss;
  }
};

agbench::Row train_step_row(int batch) {
  const int n = ag::distribute::world_size(), r = ag::distribute::rank();
  const Tensor x = ag::random_uniform({batch, 784}, ag::float32, 0, 1, 3);
  const Tensor labels = ag::one_hot(ag::cast(ag::range(batch), ag::int32) % 10, 10);
  // One process, the whole batch (the others wait at the barrier).
  double alone = 0;
  if (r == 0) {
    Model m;
    auto step = ag::function([&](Tensor xs, Tensor ls) { return m.step(xs, ls, false); });
    step(x, labels);
    alone = agbench::time_per_call([&] { agbench::keep(step(x, labels)); }, 0.3);
  }
  MPI_Bcast(&alone, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const int rows = batch / n;
  const Tensor mine = ag::slice(x, {r * rows, 0}, {rows, 784}), my_labels = ag::slice(labels, {r * rows, 0}, {rows, 10});
  Model m;
  auto step = ag::function([&](Tensor xs, Tensor ls) { return m.step(xs, ls, true); });
  step(mine, my_labels);
  const double together = time_collective([&] { agbench::keep(step(mine, my_labels)); }, 100);
  return {fmt::format("train step 784-256-10, batch {}, {} processes", batch, n), agbench::us(together),
          agbench::us(alone) + " 1 process", fmt::format("{:.2f}x", together / alone),
          fmt::format("speed-up {:.2f} on {} cores", alone / together, std::thread::hardware_concurrency())};
}

}  // namespace

int main() {
  ag::distribute::init();
  if (ag::distribute::world_size() < 2 && ag::distribute::rank() == 0)
    fmt::print("(one process: run under mpirun -np 2 to measure messages)\n");
  std::vector<agbench::Row> rows;
  for (agbench::Row& row : all_reduce_rows(int64_t{1} << 18, 200)) rows.push_back(row);
  for (agbench::Row& row : all_reduce_rows(int64_t{1} << 22, 20)) rows.push_back(row);
  for (agbench::Row& row : small_tensors_rows()) rows.push_back(row);
  rows.push_back(train_step_row(256));
  if (ag::distribute::rank() == 0)
    agbench::print_table(fmt::format("ag::distribute on {} processes of this machine ({} cores; baselines: MPI from C++)",
                                     ag::distribute::world_size(), std::thread::hardware_concurrency()),
                         rows);
  return 0;
}
