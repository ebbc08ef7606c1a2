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
#include "ag/tree.h"
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
  // (or jacobian) call — a second raises ValueError — and records nothing after it; a
  // persistent one computes any number, and records its own backward ops, so that it can
  // differentiate its own gradient (second order with one tape). With
  // watch_accessed_variables = false, only the Variables given to watch() are sources.
  explicit GradientTape(bool persistent = false, bool watch_accessed_variables = true);
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  // Records the ops applied to `t` from now on (tensors computed from it are followed anyway).
  void watch(const Tensor& t);
  // Makes the reads of `v` sources of its gradient (every read while recording is one anyway,
  // unless the tape was made with watch_accessed_variables = false).
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

  // tf.GradientTape.jacobian: d target[i...] / d source[j...], of shape target.shape +
  // source.shape (one backward pass per element of the target: eagerly a loop, while tracing a
  // staged loop, so a compiled Jacobian has one backward in its code).
  Tensor jacobian(const Tensor& target, const GradSource& source,
                  UnconnectedGradients unconnected = UnconnectedGradients::none, Loc loc = Loc::current());
  std::vector<Tensor> jacobian(const Tensor& target, const std::vector<GradSource>& sources,
                               UnconnectedGradients unconnected = UnconnectedGradients::none, Loc loc = Loc::current());
  // tf.GradientTape.batch_jacobian: for target [b, y...] and source [b, x...], whose row i of the
  // target depends only on row i of the source, d target[i, y...] / d source[i, x...] of shape
  // [b, y..., x...] (one backward pass per element of a row).
  Tensor batch_jacobian(const Tensor& target, const Tensor& source,
                        UnconnectedGradients unconnected = UnconnectedGradients::none, Loc loc = Loc::current());

  // tf.GradientTape.stop_recording: nothing is recorded while the returned object lives.
  class RecordingPaused {
   public:
    RecordingPaused(RecordingPaused&&) noexcept;
    RecordingPaused(const RecordingPaused&) = delete;
    RecordingPaused& operator=(const RecordingPaused&) = delete;
    RecordingPaused& operator=(RecordingPaused&&) = delete;
    ~RecordingPaused();

   private:
    friend class GradientTape;
    RecordingPaused(detail::TapeState* tape, bool was);
    detail::TapeState* tape_;
    bool was_;
  };
  [[nodiscard]] RecordingPaused stop_recording();
  // Forgets everything recorded and watched, as a new tape would (tf.GradientTape.reset).
  void reset();
  // The Variables the tape watches (read while recording, or given to watch()), in order.
  std::vector<Variable> watched_variables() const;

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

// The first parameter that is an ag::Tensor or a struct (of tensors): what ag::grad
// differentiates by default.
template <class Sig>
struct first_tensor_param;
template <class R, class... A>
struct first_tensor_param<R(A...)> {
  static constexpr size_t index = [] {
    constexpr bool is_tensor[] = {(std::is_same_v<std::remove_cvref_t<A>, Tensor> || is_struct_param<A>)..., false};
    for (size_t i = 0; i < sizeof...(A); ++i)
      if (is_tensor[i]) return i;
    return sizeof...(A);
  }();
  static_assert(index < sizeof...(A),
                "ag::grad: the function has no ag::Tensor or struct parameter to differentiate");
};

// A differentiated parameter: an ag::Tensor, or a struct whose leaves are all tensors (its
// gradient is the same struct, a Function result, which holds only tensors).
template <class P>
constexpr bool differentiable_param() {
  using T = std::remove_cvref_t<P>;
  if constexpr (is_struct_param<T>) {
    static_assert(tensors_only<T>(),
                  "ag::grad with respect to a struct: every field must be an ag::Tensor, a std::array of them or a "
                  "nested struct of these (pass numbers and other settings as separate parameters)");
    return true;
  } else {
    static_assert(std::is_same_v<T, Tensor>, "ag::grad differentiates with respect to ag::Tensor or struct parameters");
    return true;
  }
}

// `t`, or a fresh identity of it (an alias; while tracing, an identity node) when `seen` holds
// it already; appends the result to `seen`.
Tensor distinct_source(const Tensor& t, std::vector<Tensor>& seen);

// The callable ag::grad traces: the user's function under a tape, then the gradients (zeros for
// a parameter the result does not depend on, as jax.grad).
template <class F, class Sig, bool WithValue, size_t... I>
struct GradCall;
template <class F, class R, class... A, bool WithValue, size_t... I>
struct GradCall<F, R(A...), WithValue, I...> {
  F fn;
  std::source_location loc;  // the ag::grad call: the backward's seed is attributed to it
  static_assert((differentiable_param<std::tuple_element_t<I, std::tuple<A...>>>() && ...));
  auto operator()(A... a) const {
    GradientTape tape;
    // Copies: the sources must outlive the call, and a tensor passed for two differentiated
    // parameters becomes two sources (each parameter's gradient is its own, as in TensorFlow).
    std::tuple<std::remove_cvref_t<A>...> args(a...);
    // The sources: each differentiated parameter's tensors (a struct's leaves, in field order).
    std::vector<GradSource> sources;
    std::vector<Tensor> seen;
    auto add_sources = [&](auto& param) {
      auto distinct = [&](const Tensor& t) { return distinct_source(t, seen); };
      param = map_leaves(param, distinct);
      for (const Tensor& t : tree_leaves(param)) {
        tape.watch(t);
        sources.emplace_back(t);
      }
    };
    (add_sources(std::get<I>(args)), ...);
    const Tensor value = std::apply(fn, args);
    const std::vector<Tensor> g = tape.gradient(value, sources, UnconnectedGradients::zero, loc);
    // Each parameter's gradient, shaped like it (braced lists evaluate left to right).
    size_t at = 0;
    auto grad_of = [&](const auto& param) { return unflatten_leaves(param, g, at); };
    if constexpr (WithValue) return std::tuple{value, grad_of(std::get<I>(args))...};
    else if constexpr (sizeof...(I) == 1) return grad_of(std::get<I...>(args));
    else return std::tuple{grad_of(std::get<I>(args))...};
  }
};

template <bool WithValue, class F, size_t... I>
auto make_grad(F fn, Argnums<I...>, FunctionOptions options, std::source_location loc, const char* what) {
  using Sig = typename signature_of<std::decay_t<F>>::type;
  const void* fn_ptr = nullptr;
  if constexpr (std::is_pointer_v<std::decay_t<F>>) fn_ptr = reinterpret_cast<const void*>(fn);
  const FunctionInfo info = function_info_of(fn_ptr, loc.file_name(), loc.line());
  if (options.name.empty()) options.name = std::string(what) + "(" + info.name + ")";
  // The gradient takes fn's parameters: it keeps their names (registered by ag-rewrite).
  if (options.param_names.empty()) options.param_names = info.params;
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
