// C++ side effects (the guide's "Executing Python side effects", "Changing Python global and free
// variables" and "Using Python iterators and generators"): printing with printf, pushing to a
// std::vector, bumping an int counter or advancing an iterator all happen while tracing — once
// per signature — not on every call. ag::print and ag::Variable happen on every call.
#include <ag/ag.h>

#include <cstdio>
#include <vector>

using ag::Tensor;

// The guide's Model: an int counter meant to guard a one-time increment. The guard is plain C++,
// so it is evaluated once, while tracing, and the increment it let through is in the graph:
// every call increments.
struct Model {
  ag::Variable v{ag::Tensor(0), "v"};
  int counter = 0;

  Tensor operator()() {
    if (counter == 0) {  // a C++ side effect: runs while tracing only
      counter += 1;
      v.assign_add(1);
    }
    return v.read_value();
  }
};

int main() {
  auto f = ag::function(
      [](int x) {
        std::printf("Traced with %d\n", x);
        ag::print("Executed with", x);
      },
      {.name = "f"});
  f(1);
  f(1);
  f(2);

  std::vector<int> external_list;
  auto side_effect = ag::function(
      [&](int x) {
        std::printf("C++ side effect\n");
        external_list.push_back(x);
      },
      {.name = "side_effect"});
  side_effect(1);
  side_effect(1);
  side_effect(1);
  fmt::print("external_list has {} element(s): the push_back happened once\n", external_list.size());

  Model m;
  auto call_model = ag::function([&] { return m(); }, {.name = "model"});
  for (int n = 0; n < 3; ++n) fmt::print("model() = {}\n", call_model().item<int>());

  // An iterator advanced while tracing: the value read on the first trace is frozen into the graph.
  std::vector<int> values{1, 2, 3};
  auto it = values.begin();
  auto buggy_consume_next = ag::function([&] { ag::print("Value:", *it++); }, {.name = "buggy_consume_next"});
  buggy_consume_next();
  buggy_consume_next();
  buggy_consume_next();

  // The tensor way: the data is a tensor, the position a Variable advanced by the graph.
  Tensor dataset = ag::constant({1, 2, 3});
  ag::Variable position(ag::Tensor(0), "position");
  auto good_consume_next = ag::function(
      [&] {
        ag::print("Value:", dataset[position.read_value()]);
        position.assign_add(1);
      },
      {.name = "good_consume_next"});
  good_consume_next();
  good_consume_next();
  good_consume_next();
  return 0;
}
// OUT: Traced with 1
// OUT-NEXT: Executed with 1
// OUT-NEXT: Executed with 1
// OUT-NEXT: Traced with 2
// OUT-NEXT: Executed with 2
// OUT-NEXT: C++ side effect
// OUT-NEXT: external_list has 1 element(s): the push_back happened once
// OUT-NEXT: model() = 1
// OUT-NEXT: model() = 2
// OUT-NEXT: model() = 3
// OUT-NEXT: Value: 1
// OUT-NEXT: Value: 1
// OUT-NEXT: Value: 1
// OUT-NEXT: Value: 1
// OUT-NEXT: Value: 2
// OUT-NEXT: Value: 3
