// Limitations (the guide's "All outputs of a tf.function must be return values", "Recursive
// tf.functions are not supported" and "Creating tf.Variables"): each is a clear error naming
// what went wrong, never a crash or a silently wrong result.
#include <ag/ag.h>

#include <optional>

using ag::Tensor;

Tensor x;  // a global that a traced function writes: the tensor leaks out of its trace

Tensor leaky_function(Tensor a) {
  x = a + 1;  // bad: leaks a symbolic tensor
  return a + 2;
}

Tensor captures_leaked_tensor(Tensor b) {
  b += x;  // bad: x is the tensor leaked from leaky_function's trace
  return b;
}

ag::Function<Tensor(Tensor)>* recursive = nullptr;

AG_FUNCTION Tensor recursive_fn(Tensor n) {
  if (n > 0) return (*recursive)(n - 1);
  return Tensor(1);
}

template <class F>
void expect_error(const char* what, F&& f) {
  try {
    f();
    fmt::print("{}: no error?!\n", what);
  } catch (const ag::Error& e) {
    fmt::print("{}: {}\n", what, e.what());
  }
}

int main() {
  auto leaky = ag::function(leaky_function, {.name = "leaky_function"});
  fmt::print("leaky_function(1) = {}  (good: the value returned)\n", leaky(Tensor(1)).item<int>());
  expect_error("using the leaked x", [] { (void)(x * 2); });
  auto captures = ag::function(captures_leaked_tensor, {.name = "captures_leaked_tensor"});
  expect_error("captures_leaked_tensor(2)", [&] { captures(Tensor(2)); });

  auto rec = ag::function(recursive_fn, {.name = "recursive_fn"});
  recursive = &rec;
  expect_error("\nrecursive_fn(5)", [&] { rec(Tensor(5)); });

  // Variables: a Function that creates one on every trace raises on its first call (TensorFlow's
  // singleton rule: the first call traces it twice, and the second trace must create none).
  auto creates_variable = ag::function(
      [](float x) {
        ag::Variable v(Tensor(1.f), "v");
        return v.read_value() + x;
      },
      {.name = "f"});
  expect_error("\nf(1.0), a Variable created on every trace", [&] { creates_variable(1.f); });

  // The pattern that works: create it once, on the first call, and keep it.
  std::optional<ag::Variable> count;
  auto counter = ag::function(
      [&] {
        if (!count) count.emplace(Tensor(0), "count");
        return count->assign_add(1);
      },
      {.name = "Count"});
  fmt::print("Count() = {}\n", counter().item<int>());
  fmt::print("Count() = {}\n", counter().item<int>());
  return 0;
}
// OUT: leaky_function(1) = 3 (good: the value returned)
// OUT-NEXT: using the leaked x: tensor leaked from a traced function{{.*}}leaky_function
// OUT-NEXT: captures_leaked_tensor(2): tensor leaked from a traced function
// OUT: recursive_fn(5): Function 'recursive_fn' calls itself while it is being traced
// OUT: f(1.0), a Variable created on every trace: 'f' creates an ag::Variable on every trace
// OUT-NEXT: Count() = 1
// OUT-NEXT: Count() = 2
