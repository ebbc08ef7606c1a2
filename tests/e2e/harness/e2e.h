// The end-to-end corpus harness: each annotated function registers input sets; the runner
// calls it eagerly (directly, on concrete tensors), through ag::function with the graph
// interpreter, and through ag::function with the JIT, and prints the eager results.
#pragma once

#include <ag/ag.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

namespace e2e {

enum class Mode { Eager, Interpreter, Jit };

struct Case {
  std::string name;  // "fn(inputs)"
  std::function<std::string(Mode)> run;
};

std::vector<Case>& registry();
std::string show(const ag::Tensor& t);
inline std::string show(const std::tuple<ag::Tensor, ag::Tensor>& t) {
  return "(" + show(std::get<0>(t)) + ", " + show(std::get<1>(t)) + ")";
}
inline std::string show(const std::tuple<ag::Tensor, ag::Tensor, ag::Tensor>& t) {
  return "(" + show(std::get<0>(t)) + ", " + show(std::get<1>(t)) + ", " + show(std::get<2>(t)) + ")";
}

template <class... A>
std::string showInputs(const std::tuple<A...>& inputs) {
  std::string out;
  std::apply([&](const auto&... a) { ((out += (out.empty() ? "" : ", ") + show(ag::Tensor(a))), ...); }, inputs);
  return out;
}

template <class R, class... P, class... Inputs>
bool add(const char* name, R (*fn)(P...), Inputs... inputs) {
  (registry().push_back(Case{std::string(name) + "(" + showInputs(inputs) + ")",
                             [fn, inputs](Mode mode) {
                               if (mode == Mode::Eager) return show(std::apply(fn, inputs));
                               auto f = ag::function(fn, {.jit_compile = mode == Mode::Jit});
                               return show(std::apply(f, inputs));
                             }}),
   ...);
  return true;
}

}  // namespace e2e

// AG_E2E(fn, std::tuple{args...}, std::tuple{args...}, ...): one case per input set.
#define AG_E2E_CAT2(a, b) a##b
#define AG_E2E_CAT(a, b) AG_E2E_CAT2(a, b)
#define AG_E2E(fn, ...) static const bool AG_E2E_CAT(e2e_case_, __LINE__) = ::e2e::add(#fn, &fn, __VA_ARGS__)
