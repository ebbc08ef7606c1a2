// ag::custom_gradient (tf.custom_gradient) and ag::recompute_grad (tf.recompute_grad).
//
//   auto log1pexp = ag::custom_gradient([](ag::Tensor x) {
//     ag::Tensor e = ag::exp(x);
//     auto grad = [e](ag::Tensor dy) { return dy * (1 - 1 / (1 + e)); };
//     return std::pair{ag::log(1 + e), grad};
//   });
//
// The function returns its result (an ag::Tensor or a std::tuple of them) and a gradient
// function taking one upstream gradient per result and returning the gradients of the tensor
// parameters: an ag::Tensor (one parameter), a std::tuple or a std::vector of them (a Tensor
// without a value: none). A function that reads Variables needs a gradient function that also
// takes `const std::vector<ag::Variable>&` (the Variables read, in order) and returns
// std::pair{parameter gradients, std::vector<ag::Tensor> of the Variables' gradients}, as
// TensorFlow's `variables=` argument. The gradient function is what the tapes differentiate the
// result by; in higher orders its own ops are recorded by the tapes around it, and the forward's
// intermediates it captures are recorded too, so their dependence on the inputs counts (as in
// TensorFlow). Inside a traced function the gradient function is traced
// with the forward into the graph, so a Function called under a tape, a staged loop and the JIT
// all use it. docs/gradients.md.
#pragma once

#include <concepts>
#include <functional>
#include <source_location>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ag/error.h"
#include "ag/function.h"
#include "ag/gradients.h"
#include "ag/variable.h"

namespace ag {
namespace detail {

// A custom-gradient call, type-erased for the runtime (grad/custom_gradient.cpp).
struct CustomGradientCall {
  std::vector<Tensor> inputs;       // the call's tensor arguments
  std::vector<Tensor> outputs;      // what the forward returned, flattened
  std::vector<Variable> variables;  // the floating-point Variables the forward read
  // The gradients of the inputs, then of the Variables (no value: none), from one per output.
  std::function<std::vector<Tensor>(std::span<const Tensor> dys)> grad;
  SourceLoc loc;
};

// Records the call on the tapes, and in the graph being traced; returns the outputs to hand out.
std::vector<Tensor> record_custom_gradient(CustomGradientCall call);

// While it lives, the Variables read are noted (TensorFlow's VariableWatcher) and, when
// `pause_tapes` (recompute_grad's forward, whose intermediates are not kept), every tape on the
// thread records nothing.
class CustomGradientForward {
 public:
  explicit CustomGradientForward(bool pause_tapes);
  ~CustomGradientForward();
  CustomGradientForward(const CustomGradientForward&) = delete;
  CustomGradientForward& operator=(const CustomGradientForward&) = delete;
  // The floating-point Variables read so far, each once; ends the pause.
  std::vector<Variable> finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

template <class T>
inline constexpr size_t num_results = 1;
template <class... T>
inline constexpr size_t num_results<std::tuple<T...>> = sizeof...(T);

template <class T>
std::vector<Tensor> result_leaves(const T& out) {
  if constexpr (std::is_same_v<T, Tensor>) return {out};
  else return std::apply([](const auto&... t) { return std::vector<Tensor>{Tensor(t)...}; }, out);
}

template <class T>
T result_from(std::span<const Tensor> leaves) {
  if constexpr (std::is_same_v<T, Tensor>) return leaves[0];
  else return [&]<size_t... I>(std::index_sequence<I...>) { return T{leaves[I]...}; }(std::make_index_sequence<num_results<T>>{});
}

// The gradients a gradient function returned for the tensor parameters, as a vector.
template <class R>
std::vector<Tensor> gradient_leaves(const R& r) {
  if constexpr (std::is_same_v<std::remove_cvref_t<R>, Tensor>) return {r};
  else if constexpr (std::is_same_v<std::remove_cvref_t<R>, std::vector<Tensor>>) return r;
  else return std::apply([](const auto&... t) { return std::vector<Tensor>{Tensor(t)...}; }, r);
}

// Calls g with the upstream gradients dys[0..N) (and the Variables, when it takes them).
template <size_t N, class G, class... Extra>
decltype(auto) call_with_dys(const G& g, std::span<const Tensor> dys, const Extra&... extra) {
  return [&]<size_t... I>(std::index_sequence<I...>) -> decltype(auto) { return g(dys[I]..., extra...); }(
      std::make_index_sequence<N>{});
}

template <class G, size_t N>
constexpr bool takes_variables = []<size_t... I>(std::index_sequence<I...>) {
  return std::invocable<const G&, decltype((void)I, Tensor())..., const std::vector<Variable>&>;
}(std::make_index_sequence<N>{});

// The outputs of a recorded custom-gradient call, as the forward's result type.
template <class Out>
Out recorded(CustomGradientCall call) {
  return result_from<Out>(record_custom_gradient(std::move(call)));
}

[[noreturn]] void throw_custom_gradient_needs_variables(const std::vector<Variable>& read, SourceLoc loc);

template <class F, class Sig>
struct CustomGradientFn;
template <class F, class R, class... A>
struct CustomGradientFn<F, R(A...)> {
  static_assert((std::is_same_v<std::remove_cvref_t<A>, Tensor> && ...),
                "ag::custom_gradient: every parameter must be an ag::Tensor");
  using Out = std::remove_cvref_t<std::tuple_element_t<0, R>>;
  using Grad = std::remove_cvref_t<std::tuple_element_t<1, R>>;
  static constexpr size_t kOut = num_results<Out>;
  static_assert(std::is_same_v<Out, Tensor> || kOut > 0,
                "ag::custom_gradient: the function returns std::pair{result, gradient function}, the result an "
                "ag::Tensor or a std::tuple of them");

  F fn;
  SourceLoc loc;

  Out operator()(const A&... a) const {
    CustomGradientForward forward(/*pause_tapes=*/false);
    R result = fn(a...);
    std::vector<Variable> variables = forward.finish();
    Grad grad = std::move(std::get<1>(result));
    std::function<std::vector<Tensor>(std::span<const Tensor>)> erased;
    if constexpr (takes_variables<Grad, kOut>) {
      erased = [grad = std::move(grad), variables](std::span<const Tensor> dys) {
        auto [inputs, variable_grads] = call_with_dys<kOut>(grad, dys, variables);
        std::vector<Tensor> leaves = gradient_leaves(inputs);
        leaves.insert(leaves.end(), variable_grads.begin(), variable_grads.end());
        return leaves;
      };
    } else {
      if (!variables.empty()) throw_custom_gradient_needs_variables(variables, loc);
      erased = [grad = std::move(grad)](std::span<const Tensor> dys) { return gradient_leaves(call_with_dys<kOut>(grad, dys)); };
    }
    return recorded<Out>({{Tensor(a)...}, result_leaves(std::get<0>(result)), std::move(variables), std::move(erased), loc});
  }
};

template <class F, class Sig>
struct RecomputeGradFn;
template <class F, class R, class... A>
struct RecomputeGradFn<F, R(A...)> {
  static_assert((std::is_same_v<std::remove_cvref_t<A>, Tensor> && ...),
                "ag::recompute_grad: every parameter must be an ag::Tensor");
  using Out = std::remove_cvref_t<R>;
  F fn;
  SourceLoc loc;

  Out operator()(const A&... a) const {
    CustomGradientForward forward(/*pause_tapes=*/true);
    const Out out = fn(a...);
    std::vector<Variable> variables = forward.finish();
    // The backward runs the forward again under a tape: its intermediates are not kept.
    auto grad = [fn = fn, inputs = std::vector<Tensor>{Tensor(a)...}, vars = variables](std::span<const Tensor> dys) {
      GradientTape tape;
      std::vector<GradSource> sources;
      for (const Tensor& x : inputs) {
        tape.watch(x);
        sources.emplace_back(x);
      }
      for (const Variable& v : vars) sources.emplace_back(v);
      const std::vector<Tensor> ys = result_leaves(Out(std::apply(fn, result_from<std::tuple<A...>>(inputs))));
      Tensor target;
      for (size_t k = 0; k < ys.size(); ++k) {
        const Tensor term = reduce_sum(ys[k] * dys[k]);
        target = target.has_value() ? target + term : term;
      }
      return tape.gradient(target, sources, UnconnectedGradients::zero);
    };
    return recorded<Out>({{Tensor(a)...}, result_leaves(out), std::move(variables), std::move(grad), loc});
  }
};

}  // namespace detail

// tf.custom_gradient: see the top of this file.
template <class F>
auto custom_gradient(F fn, std::source_location loc = std::source_location::current()) {
  return detail::CustomGradientFn<F, typename detail::signature_of<std::decay_t<F>>::type>{
      std::move(fn), SourceLoc(loc)};
}

// tf.recompute_grad: fn's value, whose gradient recomputes fn's forward instead of keeping its
// intermediates (rematerialization: memory for time). fn takes ag::Tensors and returns an
// ag::Tensor or a std::tuple of them; the Variables it reads get their gradients.
template <class F>
auto recompute_grad(F fn, std::source_location loc = std::source_location::current()) {
  return detail::RecomputeGradFn<F, typename detail::signature_of<std::decay_t<F>>::type>{
      std::move(fn), SourceLoc(loc)};
}

}  // namespace ag
