// State (the guide's state_example): a plain C++ value read while tracing is frozen into the
// graph; an ag::Variable is captured by reference and keeps changing.
#include <ag/ag.h>

int main() {
  int external_value = 20;
  ag::Variable v(ag::Tensor(10), "v");
  auto state_example = ag::function(
      [&]() {
        v.assign_add(1);
        return std::tuple<ag::Tensor, ag::Tensor>{ag::Tensor(external_value), v.read_value()};
      },
      {.name = "state_example"});
  for (int i = 0; i < 3; ++i) {
    auto [frozen, variable] = state_example();
    fmt::print("external_value (captured): {}, variable: {}\n", frozen.item<int>(), variable.item<int>());
    external_value += 5;  // ignored by the compiled function: read once, while tracing
  }
  return 0;
}
// OUT: external_value (captured): 20, variable: 11
// OUT-NEXT: external_value (captured): 20, variable: 12
// OUT-NEXT: external_value (captured): 20, variable: 13
