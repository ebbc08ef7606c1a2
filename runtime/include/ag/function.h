// ag::function: tf.function for C++. A Function traces its callable into a graph once per new
// input signature, compiles it, and runs the compiled code on every later call.
#pragma once

#include <array>
#include <memory>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "ag/detail/arg_view.h"
#include "ag/detail/function_core.h"
#include "ag/detail/function_outputs.h"
#include "ag/detail/struct_params.h"
#include "ag/function_options.h"
#include "ag/graph/printer.h"
#include "ag/variable.h"

namespace ag {

namespace random {
class Generator;
}

namespace detail {

template <class P>
void check_param() {
  using T = std::remove_cvref_t<P>;
  constexpr bool mutable_ref = std::is_lvalue_reference_v<P> && !std::is_const_v<std::remove_reference_t<P>>;
  static_assert(!(std::is_same_v<T, Tensor> && mutable_ref), "take ag::Tensor parameters by value or by const reference");
  static_assert(!((is_tensor_list_param<P> || is_scalar_list_param<P>) && mutable_ref),
                "take std::vector/std::array parameters by value or by const reference: a Function's arguments are its "
                "inputs (return new values as outputs)");
  static_assert(!std::is_same_v<T, Variable> || std::is_reference_v<P>,
                "take ag::Variable parameters by reference (Variable&): a Function reads and assigns the Variable it is given, not a copy");
  check_not_variable_list<P>();
  static_assert(!(is_struct_param<P> && mutable_ref),
                "take struct parameters by value or by const reference: a Function's arguments are its inputs (return "
                "new values as outputs)");
  if constexpr (is_struct_param<P>) check_struct_fields<T>();
  static_assert(!std::is_same_v<T, random::Generator>,
                "an ag::random::Generator is not an ag::function parameter: capture it by reference in the function "
                "(its draws then run on every call, like a captured Variable's reads)");
  static_assert(std::is_same_v<T, random::Generator> || is_variable_list_param<P> || is_tensor_param<P> ||
                    is_variable_param<P> || std::is_arithmetic_v<T> || std::is_enum_v<T> ||
                    std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view> ||
                    is_tensor_list_param<P> || is_scalar_list_param<P> || is_struct_param<P>,
                "ag::function parameters must be ag::Tensor, ag::Variable&, a number, bool, enum, std::string, a "
                "std::vector/std::array of ag::Tensor or of numbers, or a struct of these");
}

// Appends the layouts of P's arguments (one per leaf of a struct).
template <class P>
void append_layouts(std::vector<ParamLayout>& out) {
  using T = std::remove_cvref_t<P>;
  if constexpr (is_struct_param<P>) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      (append_layouts<reflect::field_type<T, I>>(out), ...);
    }(std::make_index_sequence<reflect::field_count_v<T>>{});
  } else if constexpr (is_tensor_param<P>) {
    out.push_back({ParamLayout::Kind::Tensor, 1});
  } else if constexpr (is_tensor_list_param<P> && container_traits<T>::fixed_size) {
    out.push_back({ParamLayout::Kind::TensorArray, std::tuple_size_v<T>});
  } else if constexpr (is_tensor_list_param<P>) {
    out.push_back({ParamLayout::Kind::TensorVector, 0});
  } else {
    out.push_back({});
  }
}
template <class... Args>
std::vector<ParamLayout> layouts_of() {
  std::vector<ParamLayout> out;
  (append_layouts<Args>(out), ...);
  return out;
}

// The argument the traced function gets for parameter P: its placeholder (a container of them,
// from `first` on, for a container of tensors), the Variable, or the caller's plain value.
template <class P>
decltype(auto) param_from(const ArgView& v, std::span<const Tensor> placeholders, size_t first) {
  using T = std::remove_cvref_t<P>;
  if constexpr (is_tensor_param<P>) {
    return static_cast<const Tensor&>(placeholders[first]);
  } else if constexpr (is_tensor_list_param<P> && container_traits<T>::fixed_size) {
    return [&]<size_t... K>(std::index_sequence<K...>) { return T{placeholders[first + K]...}; }(
        std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (is_tensor_list_param<P>) {
    const auto begin = placeholders.begin() + static_cast<std::ptrdiff_t>(first);
    return T(begin, begin + static_cast<std::ptrdiff_t>(v.count()));
  } else if constexpr (is_variable_param<P>) {
    return *const_cast<Variable*>(static_cast<const Variable*>(v.ptr));
  } else {
    return static_cast<const T&>(*static_cast<const T*>(v.ptr));
  }
}
// The same from P's leaves: views[0, leaf_count<P>()), first[k] the first placeholder of leaf k.
template <class P>
decltype(auto) param_from_leaves(const ArgView* views, std::span<const Tensor> placeholders, const size_t* first) {
  using T = std::remove_cvref_t<P>;
  if constexpr (is_struct_param<P>) {
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return T{static_cast<reflect::field_type<T, I>>(param_from_leaves<reflect::field_type<T, I>>(
          views + field_leaf_offset<T, I>(), placeholders, first + field_leaf_offset<T, I>()))...};
    }(std::make_index_sequence<reflect::field_count_v<T>>{});
  } else {
    return param_from<P>(*views, placeholders, *first);
  }
}

// Concrete-function calls that leave the plain arguments out: how many parameters are not
// plain, and which given argument parameter I takes (the number of non-plain ones before it).
template <class... Args>
constexpr size_t count_non_plain() {
  return (size_t{0} + ... + (is_plain_param<Args> ? 0 : 1));
}
template <size_t I, class... Args>
constexpr size_t non_plain_index() {
  constexpr bool plain[] = {is_plain_param<Args>..., false};
  size_t n = 0;
  for (size_t k = 0; k < I; ++k) n += plain[k] ? 0 : 1;
  return n;
}
// Makes one leaf's view of a call's argument.
struct CallView {
  template <class P>
  ArgView operator()(const std::remove_cvref_t<P>& a) const {
    return view_of<P>(a);
  }
};

// Parameter P's views (out[0, leaf_count<P>())): a Baked placeholder for a plain one, else the
// given argument J's.
template <class P, size_t J, class Held>
void view_or_baked(const Held& held, ArgView* out) {
  if constexpr (is_plain_param<P>) {
    out->kind = ArgKind::Baked;
  } else {
    using T = std::remove_cvref_t<P>;
    static_assert(std::is_convertible_v<std::tuple_element_t<J, Held>, call_param_t<P>>,
                  "a ConcreteFunction called without its plain arguments takes its tensor, container and Variable "
                  "arguments in order");
    if constexpr (std::is_same_v<std::remove_cvref_t<std::tuple_element_t<J, Held>>, T>) {
      flatten_views<P>(std::get<J>(held), out, CallView{});
    } else {
      static_assert(sizeof(T) == 0,
                    "pass each tensor argument of a ConcreteFunction called without its plain arguments as an "
                    "ag::Tensor (or the exact container type)");
    }
  }
}

template <class R, class... Args, class F>
std::vector<Tensor> invoke_traced(F& fn, std::span<const ArgView> views, std::span<const Tensor> placeholders) {
  // Where each argument's placeholders start: containers of tensors take one per element.
  constexpr size_t n = total_leaves<Args...>;
  size_t first[n + 1] = {};
  if constexpr (n > 0)
    for (size_t k = 0; k < n; ++k) first[k + 1] = first[k] + tensor_count(views[k]);
  return [&]<size_t... I>(std::index_sequence<I...>) {
    std::vector<Tensor> out;
    if constexpr (std::is_void_v<R>) {
      fn(param_from_leaves<Args>(&views[param_leaf_offset<I, Args...>()], placeholders,
                                 &first[param_leaf_offset<I, Args...>()])...);
    } else {
      outputs_of<R>::flatten(fn(param_from_leaves<Args>(&views[param_leaf_offset<I, Args...>()], placeholders,
                                                        &first[param_leaf_offset<I, Args...>()])...),
                             out);
    }
    return out;
  }(std::index_sequence_for<Args...>{});
}

// The views of a call's arguments, a struct's flattened into its leaves (and one empty view at
// the end, so that a call without arguments has an array).
template <class... Args>
std::array<ArgView, total_leaves<Args...> + 1> flat_views(call_param_t<Args>... args) {
  std::array<ArgView, total_leaves<Args...> + 1> views{};
  size_t at = 0;
  ((flatten_views<Args>(args, views.data() + at, CallView{}), at += leaf_count<Args>()), ...);
  return views;
}
template <class... Args>
inline constexpr bool has_struct_param = (is_struct_param<Args> || ...);

// FunctionInfo for flattened struct parameters: a name per leaf ("params.w1"; an unnamed
// parameter k is "argk") and each leaf's parameter index.
template <class... Args>
void name_struct_leaves(FunctionInfo& info) {
  std::vector<std::string> names;
  std::vector<uint32_t> params;
  uint32_t k = 0;
  auto add = [&]<class P>() {
    const std::string base = k < info.params.size() && !info.params[k].empty() ? info.params[k] : "arg" + std::to_string(k);
    leaf_names<P>(base, names);
    params.resize(names.size(), k++);
  };
  (add.template operator()<Args>(), ...);
  info.params = std::move(names);
  info.arg_params = std::move(params);
}

template <class S>
inline constexpr bool is_spec_list = std::is_same_v<element_of<S>, TensorSpec>;

// What get_concrete_function stores for parameter P given the user's S: a TensorSpec or Tensor
// for tensor parameters, a std::vector<TensorSpec> or an example container for containers of
// tensors, the Variable itself, or a value converted to P's type.
template <class P, class S>
struct spec_holder {
  using U = std::remove_cvref_t<S>;
  using type = std::conditional_t<
      is_tensor_param<P>, std::conditional_t<std::is_same_v<U, TensorSpec>, TensorSpec, Tensor>,
      std::conditional_t<is_tensor_list_param<P> && is_spec_list<U>, std::vector<TensorSpec>,
                         std::conditional_t<is_variable_param<P>, Variable*, std::remove_cvref_t<P>>>>;
  static type make(S&& s) {
    if constexpr (is_variable_param<P>) return &s;
    else if constexpr (is_tensor_list_param<P> && is_spec_list<U>) return type(s.begin(), s.end());
    else return type(std::forward<S>(s));
  }
  // Writes the views of P's leaves (a struct is given as an example value).
  static void flatten(const type& h, ArgView* out) {
    if constexpr (is_struct_param<P>) flatten_views<P>(h, out, CallView{});
    else *out = view(h);
  }
  static ArgView view(const type& h) {
    if constexpr (std::is_same_v<type, TensorSpec>) {
      ArgView v;
      v.kind = ArgKind::TensorSpec;
      v.ptr = &h;
      return v;
    } else if constexpr (is_tensor_list_param<P> && is_spec_list<U>) {
      ArgView v;
      v.kind = ArgKind::TensorSpecList;
      v.ptr = h.data();
      v.i = static_cast<int64_t>(h.size());
      v.fixed_size = container_traits<std::remove_cvref_t<P>>::fixed_size;
      return v;
    } else if constexpr (is_variable_param<P>) {
      return view_of<Variable>(*h);
    } else {
      return view_of<P>(h);
    }
  }
};

template <class Sig>
struct arity_of;
template <class R, class... A>
struct arity_of<R(A...)> {
  static constexpr size_t value = sizeof...(A);
};
// ValueError unless there is one name per parameter.
void check_param_names(const std::vector<std::string>& names, size_t arity, const std::string& function_name);

template <class F>
struct signature_of : signature_of<decltype(&F::operator())> {};
template <class R, class... A>
struct signature_of<R (*)(A...)> {
  using type = R(A...);
};
template <class R, class... A>
struct signature_of<R(A...)> {
  using type = R(A...);
};
template <class R, class C, class... A>
struct signature_of<R (C::*)(A...) const> {
  using type = R(A...);
};
template <class R, class C, class... A>
struct signature_of<R (C::*)(A...)> {
  using type = R(A...);
};
template <class R, class C, class... A>
struct signature_of<R (C::*)(A...) const noexcept> {
  using type = R(A...);
};
template <class R, class... A>
struct signature_of<R (*)(A...) noexcept> {
  using type = R(A...);
};

}  // namespace detail

template <class Sig>
class ConcreteFunction;

// One traced signature of a Function: a shared handle that keeps its graph and code alive.
template <class R, class... Args>
class ConcreteFunction<R(Args...)> {
 public:
  explicit ConcreteFunction(std::shared_ptr<detail::ConcreteCore> core) : core_(std::move(core)) {}

  // A tensor of another dtype: TypeError; an incompatible shape: ValueError; a plain value
  // other than the one traced: TypeError.
  R operator()(detail::call_param_t<Args>... args) const {
    const auto views = detail::flat_views<Args...>(args...);
    std::array<Tensor, detail::outputs_of<R>::count> out;
    detail::call_concrete(*core_, std::span<const detail::ArgView>(views.data(), kLeaves), out);
    return detail::outputs_of<R>::build(out);
  }

  // The call without the plain arguments, which keep the values they were traced with (as
  // TensorFlow's concrete functions take only tensors): after
  // `auto square = pow.get_concrete_function(ag::TensorSpec({}, ag::float32), 2)`, `square(x)`.
  template <class... Given>
    requires(sizeof...(Given) != sizeof...(Args) && sizeof...(Given) == detail::count_non_plain<Args...>())
  R operator()(Given&&... given) const {
    const std::tuple<Given&...> held{given...};
    std::array<detail::ArgView, kLeaves + 1> views{};
    [&]<size_t... I>(std::index_sequence<I...>) {
      (detail::view_or_baked<Args, detail::non_plain_index<I, Args...>()>(
           held, &views[detail::param_leaf_offset<I, Args...>()]),
       ...);
    }(std::index_sequence_for<Args...>{});
    std::array<Tensor, detail::outputs_of<R>::count> out;
    detail::call_concrete(*core_, std::span<const detail::ArgView>(views.data(), kLeaves), out);
    return detail::outputs_of<R>::build(out);
  }

  std::string signature() const { return detail::concrete_signature(*core_); }
  const Graph& graph() const { return detail::concrete_graph(*core_); }
  std::string graph_text() const { return graph_to_text(graph()); }
  std::string graph_dot() const { return graph_to_dot(graph()); }
  // LLVM IR as lowered (optimized = false) or after the optimization pipeline; compiles on
  // first use. Throws ag::ValueError when the function runs on the interpreter.
  std::string llvm_ir(bool optimized = true) const { return detail::concrete_llvm_ir(*core_, optimized); }
  std::string assembly() const { return detail::concrete_assembly(*core_); }
  // Flops and bytes per node and in total, from the optimized graph (JAX's cost_analysis).
  CostAnalysis cost_analysis() const { return detail::concrete_cost_analysis(*core_); }
  // Argument, output, constant and temporary bytes of the compiled code (compiles on first use).
  MemoryAnalysis memory_analysis() const { return detail::concrete_memory_analysis(*core_); }
  // Writes the one-page HTML report of this concrete function (docs/inspection.md).
  void report_html(const std::string& path) const { detail::write_concrete_report(*core_, path); }

  const std::shared_ptr<detail::ConcreteCore>& core() const { return core_; }

 private:
  static constexpr size_t kLeaves = detail::total_leaves<Args...>;  // one per argument, a struct's per field
  std::shared_ptr<detail::ConcreteCore> core_;
};

template <class Sig>
class Function;

template <class R, class... Args>
class Function<R(Args...)> {
 public:
  template <class F>
  Function(F fn, FunctionOptions options, detail::FunctionInfo info) : fn_(std::make_shared<F>(fn)) {
    (detail::check_param<Args>(), ...);
    if constexpr (detail::has_struct_param<Args...>) detail::name_struct_leaves<Args...>(info);
    auto held = std::static_pointer_cast<F>(fn_);
    core_ = detail::make_function_core(
        std::move(options), std::move(info), detail::layouts_of<Args...>(),
        detail::outputs_of<R>::count,
        [held](std::span<const detail::ArgView> views, std::span<const Tensor> placeholders) {
          return detail::invoke_traced<R, Args...>(*held, views, placeholders);
        });
    eager_ = [held](Args... args) -> R { return (*held)(std::forward<Args>(args)...); };
  }

  R operator()(detail::call_param_t<Args>... args) const {
    if (functions_run_eagerly()) [[unlikely]]
      return eager_(static_cast<detail::call_param_t<Args>>(args)...);
    if constexpr (kTensorCall && std::is_same_v<R, Tensor>) {  // the hot path
      Tensor result;  // the caller's return slot: the call constructs the result in it
      detail::call_tensor_function(*core_, std::span<Tensor>(&result, 1), &args...);
      return result;
    } else {
      std::array<Tensor, detail::outputs_of<R>::count> out;
      if constexpr (kTensorCall) {
        detail::call_tensor_function(*core_, out, &args...);
      } else if constexpr (detail::has_struct_param<Args...>) {
        const auto views = detail::flat_views<Args...>(args...);
        detail::call_function(*core_, std::span<const detail::ArgView>(views.data(), kLeaves), out);
      } else if constexpr (sizeof...(Args) > 0) {  // views built in place
        const detail::ArgView views[sizeof...(Args)] = {detail::view_of<Args>(args)...};
        detail::call_function(*core_, std::span<const detail::ArgView>(views, sizeof...(Args)), out);
      } else {
        detail::call_function(*core_, std::span<const detail::ArgView>(), out);
      }
      return detail::outputs_of<R>::build(out);
    }
  }

  // Traces (if needed) without running. Each argument is a TensorSpec or an example Tensor for
  // a tensor parameter, a std::vector<TensorSpec> or an example container for a container of
  // tensors, the Variable for a Variable parameter, or the value of a plain one.
  // Without arguments, the input_signature gives every parameter (as tf.function allows).
  template <class... Specs>
  ConcreteFunction<R(Args...)> get_concrete_function(Specs&&... specs) const {
    if constexpr (sizeof...(Specs) == 0 && sizeof...(Args) > 0)
      return ConcreteFunction<R(Args...)>(detail::get_concrete_from_input_signature(*core_));
    else
      return get_concrete_function_from(std::forward<Specs>(specs)...);
  }

  int64_t tracing_count() const { return detail::tracing_count(*core_); }
  std::vector<ConcreteFunction<R(Args...)>> concrete_functions() const {
    std::vector<ConcreteFunction<R(Args...)>> out;
    for (auto& c : detail::concrete_functions(*core_)) out.emplace_back(c);
    return out;
  }
  std::string pretty_printed_concrete_signatures() const { return detail::pretty_printed_concrete_signatures(*core_); }
  // Drops every concrete function (their code is freed once no ConcreteFunction holds it).
  void evict() { detail::evict(*core_); }
  FunctionStats stats() const { return detail::stats(*core_); }
  const std::string& name() const { return detail::function_name(*core_); }
  // Writes one self-contained HTML page about every concrete function of this Function: its
  // signatures and retrace history, graphs (after each pass), fused groups, LLVM IR, assembly
  // and sources (docs/inspection.md, "The HTML report"). AG_REPORT=<dir> writes it for every Function.
  void report_html(const std::string& path) const { detail::write_function_report(*core_, path); }

 private:
  // Every parameter one ag::Tensor, at most detail::kMaxTensorCallArgs of them: calls pass the
  // tensors' addresses (detail::call_tensor_function).
  static constexpr bool kTensorCall = sizeof...(Args) > 0 && sizeof...(Args) <= detail::kMaxTensorCallArgs &&
                                      (std::is_same_v<std::remove_cvref_t<Args>, Tensor> && ...);
  template <class... Specs>
  ConcreteFunction<R(Args...)> get_concrete_function_from(Specs&&... specs) const {
    static_assert(sizeof...(Specs) == sizeof...(Args), "get_concrete_function: one spec or value per parameter");
    std::tuple<typename detail::spec_holder<Args, Specs>::type...> held{
        detail::spec_holder<Args, Specs>::make(std::forward<Specs>(specs))...};
    std::array<detail::ArgView, kLeaves + 1> views{};
    [&]<size_t... I>(std::index_sequence<I...>) {
      (detail::spec_holder<Args, Specs>::flatten(std::get<I>(held), &views[detail::param_leaf_offset<I, Args...>()]),
       ...);
    }(std::index_sequence_for<Args...>{});
    return ConcreteFunction<R(Args...)>(
        detail::get_concrete(*core_, std::span<const detail::ArgView>(views.data(), kLeaves)));
  }

  static constexpr size_t kLeaves = detail::total_leaves<Args...>;  // one per argument, a struct's per field
  std::shared_ptr<void> fn_;
  std::function<R(Args...)> eager_;
  std::shared_ptr<detail::FunctionCore> core_;
};

// Wraps a function pointer or a callable with a fixed signature (a lambda; wrap member
// functions in a lambda). See FunctionOptions.
template <class F>
auto function(F fn, FunctionOptions options = {}, std::source_location loc = std::source_location::current()) {
  using Sig = typename detail::signature_of<std::decay_t<F>>::type;
  const void* fn_ptr = nullptr;
  if constexpr (std::is_pointer_v<std::decay_t<F>>) fn_ptr = reinterpret_cast<const void*>(fn);
  detail::FunctionInfo info = detail::function_info_of(fn_ptr, loc.file_name(), loc.line());
  if (!options.name.empty()) info.name = options.name;
  if (!options.param_names.empty()) {
    detail::check_param_names(options.param_names, detail::arity_of<Sig>::value, info.name);
    info.params = options.param_names;
  }
  return Function<Sig>(std::move(fn), std::move(options), std::move(info));
}

}  // namespace ag
