// Depending on C++ variables and objects (the guide's "Depending on Python global and free
// variables" and "Depending on Python objects", and tf.function's Dense example on methods):
// a plain value read while tracing is frozen into the graph; an ag::Variable is read live.
#include <ag/ag.h>

using ag::Tensor;

// Plain members: read once, while tracing.
struct SimpleModel {
  float bias = 0.f;
  float weight = 2.f;
};

// Variables as members: the graph reads them on every call.
struct BetterModel {
  ag::Variable bias{ag::Tensor(0.f), "bias"};
  ag::Variable weight{ag::Tensor(2.f), "weight"};
};

// A method as a Function: each instance has its own Variables and its own Function. The
// lambda captures the Variables (handles to their state), not `this`: a copy of a Dense would
// otherwise carry a Function whose lambda points at the original object.
class Dense {
 public:
  explicit Dense(uint64_t seed)
      : w_(ag::random_uniform({3, 3}, ag::float32, -1, 1, seed), "W"), b_(ag::zeros({3}), "b") {}
  Tensor operator()(Tensor x) const { return compute_(x); }

 private:
  ag::Variable w_, b_;
  ag::Function<Tensor(Tensor)> compute_ = ag::function(
      [w = w_, b = b_](Tensor x) { return ag::matmul(x, w.read_value()) + b.read_value(); }, {.name = "Dense.compute"});
};

int foo = 1;  // a global

int main() {
  auto buggy_add = ag::function([] { return Tensor(1 + foo); }, {.name = "buggy_add"});
  auto recommended_add = ag::function([](int foo_value) { return Tensor(1 + foo_value); }, {.name = "recommended_add"});
  fmt::print("Buggy: {}\n", buggy_add().item<int>());
  fmt::print("Correct: {}\n", recommended_add(foo).item<int>());
  fmt::print("Updating the value of `foo` to 100!\n");
  foo = 100;
  fmt::print("Buggy: {}\n", buggy_add().item<int>());  // did not change
  fmt::print("Correct: {}\n", recommended_add(foo).item<int>());

  ag::Variable foo_var(1, "foo");
  auto variable_add = ag::function([&] { return 1 + foo_var.read_value(); }, {.name = "variable_add"});
  fmt::print("Variable: {}\n", variable_add().item<int>());
  fmt::print("Updating the value of `foo` to 100!\n");
  foo_var.assign(100);
  fmt::print("Variable: {}\n", variable_add().item<int>());

  Tensor x = Tensor(10.f);
  SimpleModel simple_model;
  auto evaluate = ag::function([&](Tensor x) { return simple_model.weight * x + simple_model.bias; }, {.name = "evaluate"});
  fmt::print("\nevaluate(simple_model, 10) = {}\n", evaluate(x).item<float>());
  fmt::print("Adding bias!\n");
  simple_model.bias += 5.f;
  fmt::print("evaluate(simple_model, 10) = {}  (didn't change: the members were frozen)\n", evaluate(x).item<float>());
  // The workaround: a new Function (a new trace) after modifying the object.
  auto evaluate_with_bias = ag::function([&](Tensor x) { return simple_model.weight * x + simple_model.bias; }, {.name = "evaluate"});
  fmt::print("a new Function: {}\n", evaluate_with_bias(x).item<float>());

  BetterModel better_model;
  auto evaluate_better = ag::function(
      [&](Tensor x) { return better_model.weight.read_value() * x + better_model.bias.read_value(); }, {.name = "evaluate"});
  fmt::print("\nevaluate(better_model, 10) = {}\n", evaluate_better(x).item<float>());
  fmt::print("Adding bias!\n");
  better_model.bias.assign_add(5.f);
  fmt::print("evaluate(better_model, 10) = {}  (this works)\n", evaluate_better(x).item<float>());

  Dense d1(1), d2(2);
  Tensor input = ag::random_uniform({3, 3}, ag::float32, 0, 1, 3);
  fmt::print("\nd1 and d2 use distinct variables: outputs differ = {}\n",
             ag::reduce_any(d1(input) != d2(input)).item<bool>());
  Dense copy = d1;  // the same layer: shared Variables and Function, valid on its own
  fmt::print("a copy of d1 computes what d1 does = {}\n", ag::reduce_all(copy(input) == d1(input)).item<bool>());
  return 0;
}
// OUT: Buggy: 2
// OUT-NEXT: Correct: 2
// OUT-NEXT: Updating the value of `foo` to 100!
// OUT-NEXT: Buggy: 2
// OUT-NEXT: Correct: 101
// OUT-NEXT: Variable: 2
// OUT-NEXT: Updating the value of `foo` to 100!
// OUT-NEXT: Variable: 101
// OUT: evaluate(simple_model, 10) = 20
// OUT-NEXT: Adding bias!
// OUT-NEXT: evaluate(simple_model, 10) = 20 (didn't change
// OUT-NEXT: a new Function: 25
// OUT: evaluate(better_model, 10) = 20
// OUT-NEXT: Adding bias!
// OUT-NEXT: evaluate(better_model, 10) = 25 (this works)
// OUT: d1 and d2 use distinct variables: outputs differ = true
// OUT-NEXT: a copy of d1 computes what d1 does = true
