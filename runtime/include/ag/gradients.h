// Reverse-mode gradients: ag::GradientTape (tf.GradientTape) and ag::stop_gradient.
//
// A tape records the ops applied to the tensors it watches, eagerly or while a Function traces
// (then the backward ops are traced too, into the same graph: forward, backward and an optimizer
// update compile into one concrete function). Variables read while a tape records are watched.
// docs/gradients.md describes the design; docs/guide.md ("Gradients") shows the use.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ag/function.h"
#include "ag/ops.h"
#include "ag/tensor.h"
#include "ag/variable.h"

namespace ag {

namespace detail {
struct TapeState;
}

// What gradient() returns for a source the target does not depend on: a Tensor with no value
// (TensorFlow's None), or zeros of the source's shape and dtype.
enum class UnconnectedGradients { none, zero };

// A source to differentiate with respect to: a Tensor or a Variable.
class GradSource {
 public:
  GradSource(const Tensor& t) : tensor_(t) {}      // NOLINT: a tensor is a source
  GradSource(const Variable& v) : variable_(&v) {}  // NOLINT: so is a Variable
  const Tensor& tensor() const { return tensor_; }
  const Variable* variable() const { return variable_; }

 private:
  Tensor tensor_;
  const Variable* variable_ = nullptr;
};

class GradientTape {
 public:
  // Records from construction to destruction. A non-persistent tape computes one gradient()
  // call (a second raises ValueError); a persistent one any number.
  explicit GradientTape(bool persistent = false);
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Records the ops applied to `t` from now on (tensors computed from it are followed anyway).
  void watch(const Tensor& t);
  void watch(const Variable& v);

  // d(sum of target) / d source, the source's shape and dtype; `output_gradients` (the target's
  // shape) weights the target's elements instead of ones. Integer and bool sources give no value.
  // `loc` (the caller's line) names the backward's seed in graphs and errors.
  Tensor gradient(const Tensor& target, const GradSource& source,
                  UnconnectedGradients unconnected = UnconnectedGradients::none, Loc loc = Loc::current());
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<GradSource>& sources,
                               UnconnectedGradients unconnected = UnconnectedGradients::none, Loc loc = Loc::current());
  std::vector<Tensor> gradient(const Tensor& target, const std::vector<GradSource>& sources,
                               const Tensor& output_gradients,
                               UnconnectedGradients unconnected = UnconnectedGradients::none, Loc loc = Loc::current());
  // A braced list of sources, also of one (`tape.gradient(y, {x})`, TensorFlow's `[x]`): a list.
  std::vector<Tensor> gradient(const Tensor& target, std::initializer_list<GradSource> sources,
                               UnconnectedGradients unconnected = UnconnectedGradients::none, Loc loc = Loc::current()) {
    return gradient(target, std::vector<GradSource>(sources), unconnected, loc);
  }
  std::vector<Tensor> gradient(const Tensor& target, std::initializer_list<GradSource> sources,
                               const Tensor& output_gradients,
                               UnconnectedGradients unconnected = UnconnectedGradients::none, Loc loc = Loc::current()) {
    return gradient(target, std::vector<GradSource>(sources), output_gradients, unconnected, loc);
  }

 private:
  std::unique_ptr<detail::TapeState> state_;
};

// ---- JAX's grad and value_and_grad, as Functions ----

// Which parameters ag::grad differentiates with respect to: ag::argnums<0, 2>.
template <size_t... I>
struct Argnums {};
template <size_t... I>
inline constexpr Argnums<I...> argnums{};

namespace detail {

template <class Sig>
struct first_tensor_param;
template <class R, class... A>
struct first_tensor_param<R(A...)> {
  static constexpr size_t index = [] {
    constexpr bool is_tensor[] = {std::is_same_v<std::remove_cvref_t<A>, Tensor>..., false};
    for (size_t i = 0; i < sizeof...(A); ++i)
      if (is_tensor[i]) return i;
    return sizeof...(A);
  }();
  static_assert(index < sizeof...(A), "ag::grad: the function has no ag::Tensor parameter to differentiate");
};

// The callable ag::grad traces: the user's function under a tape, then the gradients (zeros for
// a parameter the result does not depend on, as jax.grad).
template <class F, class Sig, bool WithValue, size_t... I>
struct GradCall;
template <class F, class R, class... A, bool WithValue, size_t... I>
struct GradCall<F, R(A...), WithValue, I...> {
  F fn;
  std::source_location loc;  // the ag::grad call: the backward's seed is attributed to it
  auto operator()(A... a) const {
    GradientTape tape;
    auto args = std::forward_as_tuple(a...);
    (tape.watch(Tensor(std::get<I>(args))), ...);
    const Tensor value = fn(a...);  // (copies: the sources must outlive the call)
    const std::vector<Tensor> g = tape.gradient(value, std::vector<GradSource>{GradSource(std::get<I>(args))...},
                                                UnconnectedGradients::zero, loc);
    return [&]<size_t... K>(std::index_sequence<K...>) {
      if constexpr (WithValue) return std::tuple{value, g[K]...};
      else if constexpr (sizeof...(I) == 1) return g[0];
      else return std::tuple{g[K]...};
    }(std::make_index_sequence<sizeof...(I)>{});
  }
};

template <bool WithValue, class F, size_t... I>
auto make_grad(F fn, Argnums<I...>, FunctionOptions options, std::source_location loc, const char* what) {
  using Sig = typename signature_of<std::decay_t<F>>::type;
  const void* fn_ptr = nullptr;
  if constexpr (std::is_pointer_v<std::decay_t<F>>) fn_ptr = reinterpret_cast<const void*>(fn);
  if (options.name.empty()) options.name = std::string(what) + "(" + function_info_of(fn_ptr, loc.file_name(), loc.line()).name + ")";
  return function(GradCall<std::decay_t<F>, Sig, WithValue, I...>{std::move(fn), loc}, std::move(options), loc);
}

}  // namespace detail

// jax.grad: a Function returning d fn / d (the parameters in `argnums`; by default the first
// ag::Tensor parameter), where fn returns a Tensor (summed when not a scalar). Traced and compiled
// per signature like any Function: the forward and the backward are one graph.
template <class F, size_t... I>
auto grad(F fn, Argnums<I...> which, FunctionOptions options = {},
          std::source_location loc = std::source_location::current()) {
  return detail::make_grad<false>(std::move(fn), which, std::move(options), loc, "grad");
}
template <class F>
auto grad(F fn, FunctionOptions options = {}, std::source_location loc = std::source_location::current()) {
  using Sig = typename detail::signature_of<std::decay_t<F>>::type;
  return detail::make_grad<false>(std::move(fn), argnums<detail::first_tensor_param<Sig>::index>, std::move(options),
                                  loc, "grad");
}
// jax.value_and_grad: the same, returning std::tuple{value, gradients...}.
template <class F, size_t... I>
auto value_and_grad(F fn, Argnums<I...> which, FunctionOptions options = {},
                    std::source_location loc = std::source_location::current()) {
  return detail::make_grad<true>(std::move(fn), which, std::move(options), loc, "value_and_grad");
}
template <class F>
auto value_and_grad(F fn, FunctionOptions options = {}, std::source_location loc = std::source_location::current()) {
  using Sig = typename detail::signature_of<std::decay_t<F>>::type;
  return detail::make_grad<true>(std::move(fn), argnums<detail::first_tensor_param<Sig>::index>, std::move(options),
                                 loc, "value_and_grad");
}

}  // namespace ag
