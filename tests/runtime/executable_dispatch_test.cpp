// Which entry of a compiled Executable a call takes (docs/performance.md, "W4"): a call whose
// every argument is one Tensor goes to run_tensor_args (the cached call's short path, given the
// argument views), anything else to run. A counting backend around the interpreter records
// both; the values must be the eager ones either way.
#include <atomic>

#include "ag/backend.h"
#include "test_util.h"

namespace {

using ag::Tensor;

std::atomic<int> g_runs{0}, g_tensor_arg_runs{0};

class CountingExecutable final : public ag::Executable {
 public:
  explicit CountingExecutable(std::shared_ptr<const ag::Graph> graph) : inner_(ag::make_interpreter(std::move(graph))) {}
  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) const override {
    ++g_runs;
    inner_->run(inputs, outputs);
  }
  void run_tensor_args(std::span<const ag::detail::ArgView> args, std::span<Tensor> outputs) const override {
    ++g_tensor_arg_runs;
    for (const ag::detail::ArgView& a : args) EXPECT_EQ(a.kind, ag::detail::ArgKind::Tensor);
    Executable::run_tensor_args(args, outputs);  // the default: gathers the inputs, then run()
  }
  std::string_view backend_name() const override { return "counting"; }

 private:
  std::unique_ptr<ag::Executable> inner_;
};

class CountingBackend final : public ag::CompilerBackend {
 public:
  std::string_view name() const override { return "counting"; }
  std::unique_ptr<ag::Executable> compile(std::shared_ptr<const ag::Graph> graph, const ag::CompileOptions&) override {
    return std::make_unique<CountingExecutable>(std::move(graph));
  }
};

class ExecutableDispatch : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(ag::compiler_backend(), nullptr);  // runtime tests link no JIT
    static CountingBackend backend;  // lives as long as the process: the warm-up thread may see it
    ag::set_compiler_backend(&backend);
    g_runs = g_tensor_arg_runs = 0;
  }
  void TearDown() override { ag::set_compiler_backend(nullptr); }
};

TEST_F(ExecutableDispatch, TensorArgumentsTakeTheShortPath) {
  auto f = ag::function([](Tensor x, Tensor y) { return x * y + 1.0f; });
  const Tensor x = ag::constant({1.f, 2.f, 3.f}), y = ag::constant({2.f, 2.f, 2.f});
  for (int i = 0; i < 5; ++i) EXPECT_EQ(f(x, y).to_vector<float>(), (std::vector<float>{3.f, 5.f, 7.f}));
  EXPECT_EQ(g_tensor_arg_runs.load(), 5);  // the first call's too (after its compile)
  EXPECT_EQ(g_runs.load(), 5);             // each through the default, which calls run()
  EXPECT_EQ(f.stats().inline_hits, 3);
}

TEST_F(ExecutableDispatch, PlainArgumentsAndTapesTakeRun) {
  auto scaled = ag::function([](Tensor x, int k) { return x * static_cast<float>(k); });
  for (int i = 0; i < 3; ++i) EXPECT_EQ(scaled(ag::constant({2.f}), 3).to_vector<float>(), std::vector<float>{6.f});
  EXPECT_EQ(g_tensor_arg_runs.load(), 0);
  EXPECT_EQ(g_runs.load(), 3);

  // Under a tape the call is recorded (one op with a compiled backward, or op by op): its
  // gradient must come out right, which the short path would not record.
  auto square = ag::function([](Tensor x) { return x * x; });
  const Tensor x = ag::constant(3.0f);
  square(x);
  const int before = g_tensor_arg_runs.load();
  ag::GradientTape tape;
  tape.watch(x);
  const Tensor y = square(x);
  EXPECT_FLOAT_EQ(tape.gradient(y, x).item<float>(), 6.0f);
  EXPECT_EQ(g_tensor_arg_runs.load(), before);
}

}  // namespace
