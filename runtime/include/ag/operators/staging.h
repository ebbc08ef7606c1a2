// Internals of the control-flow operators: non-owning callable references, state variables
// and the staged (graph-building) implementations, which live in the runtime library.
#pragma once

#include <array>
#include <initializer_list>
#include <span>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "ag/detail/struct_params.h"
#include "ag/tensor.h"
#include "ag/tensor_array.h"

namespace ag::detail {

// A non-owning reference to a callable (the lambdas of rewritten code).
template <class Sig>
class FnRef;
template <class R, class... A>
class FnRef<R(A...)> {
 public:
  template <class F>
  FnRef(F& f)  // NOLINT: implicit from any callable
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, A... a) -> R { return static_cast<R>((*static_cast<F*>(o))(std::forward<A>(a)...)); }) {}
  R operator()(A... a) const { return call_(obj_, std::forward<A>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

// TensorInVector: an element of a std::vector<ag::Tensor>, reached through the vector (whose
// length must stay fixed inside the construct), so that no element pointer can dangle.
// VectorLength: the vector itself, holding no value: it checks that the length stayed fixed
// (also for an empty vector, which has no elements to check it).
enum class StateKind : uint8_t { Tensor, TensorArray, TensorInVector, VectorLength, Other };

// One variable a staged construct may modify: a reference plus its name for messages.
// A name starting with "::" is a global (docs/guide.md, "The staging rules": globals may not change). The elements
// of a std::array or std::vector of tensors are one StateVar each (AutoGraph's composite
// names: `arr[0]`, `arr[1]`).
struct StateVar {
  StateKind kind;
  void* ptr;  // the variable; TensorInVector: the std::vector
  const char* name;
  const std::type_info* type;
  int32_t element = -1;  // an element of a container: its index
  uint32_t length = 0;   // TensorInVector: the vector's length when the construct began
};

template <class T>
StateVar make_state_var(T& v, const char* name) {
  if constexpr (std::is_same_v<T, Tensor>) return {StateKind::Tensor, &v, name, &typeid(T)};
  else if constexpr (std::is_same_v<T, TensorArray>) return {StateKind::TensorArray, &v, name, &typeid(T)};
  else return {StateKind::Other, const_cast<void*>(static_cast<const void*>(&v)), name, &typeid(T)};
}

template <class T>
struct state_container {
  static constexpr bool array = false, vector = false;
};
template <class E, size_t N>
struct state_container<std::array<E, N>> {
  static constexpr bool array = std::is_same_v<E, Tensor> || std::is_same_v<E, TensorArray>;
  static constexpr bool vector = false;
};
template <class A>
struct state_container<std::vector<Tensor, A>> {
  static constexpr bool array = false, vector = true;
};

// "parent.field", kept for the life of the process (StateVar names are C strings that outlive
// the construct: the names of a few struct fields, each interned once).
const char* field_state_name(const char* parent, std::string_view field);

// Appends the StateVars of one variable: itself, each element of a container of tensors, or
// each field of a struct ("g.w", "g.b"), as if each were named in the construct's state.
template <class T>
void append_state_vars(std::vector<StateVar>& out, T& v, const char* name) {
  using U = std::remove_const_t<T>;
  if constexpr (is_struct_param<U>) {
    for_each_field(v, [&]<class F, size_t I>(auto& field) {
      append_state_vars(out, field, field_state_name(name, reflect::field_name<U, I>()));
    });
  } else if constexpr (state_container<std::remove_const_t<T>>::array) {
    for (size_t k = 0; k < v.size(); ++k) {
      StateVar s = make_state_var(v[k], name);
      s.element = static_cast<int32_t>(k);
      out.push_back(s);
    }
  } else if constexpr (state_container<std::remove_const_t<T>>::vector) {
    void* vec = const_cast<void*>(static_cast<const void*>(&v));
    const auto length = static_cast<uint32_t>(v.size());
    out.push_back({StateKind::VectorLength, vec, name, &typeid(T), -1, length});
    for (size_t k = 0; k < v.size(); ++k)
      out.push_back({StateKind::TensorInVector, vec, name, &typeid(Tensor), static_cast<int32_t>(k), length});
  } else {
    out.push_back(make_state_var(v, name));
  }
}

}  // namespace ag::detail

namespace ag {
// The names of a construct's state variables, for error messages: {"x", "s.h", "::g"}.
// The list lives as long as the operator call it is written in (a braced list's array lasts
// until the end of the full expression), which is as long as a Names is used.
class Names {
 public:
  Names(std::initializer_list<const char*> list) : list_(list) {}             // NOLINT
  Names(std::span<const char* const> list) : span_(list), from_span_(true) {}  // NOLINT
  size_t size() const { return from_span_ ? span_.size() : list_.size(); }
  const char* operator[](size_t i) const {
    if (i >= size()) return "<unnamed>";
    return from_span_ ? span_[i] : list_.begin()[i];
  }

 private:
  std::initializer_list<const char*> list_{};
  std::span<const char* const> span_{};
  bool from_span_ = false;
};
}  // namespace ag

namespace ag::detail {

template <class... Ts>
std::vector<StateVar> erase_state(const std::tuple<Ts&...>& vars, Names names) {
  std::vector<StateVar> out;
  out.reserve(sizeof...(Ts));
  [&]<size_t... I>(std::index_sequence<I...>) { (append_state_vars(out, std::get<I>(vars), names[I]), ...); }(
      std::index_sequence_for<Ts...>{});
  return out;
}

// The truth of a concrete condition (a scalar; non-bool dtypes compare with 0).
bool truth(const Tensor& c, const char* construct, SourceLoc loc);
// The truth of a condition that may be a C++ bool or a concrete tensor.
inline bool truth(bool c, const char*, SourceLoc) { return c; }

// Before staging a converted construct (if_stmt, while_stmt, for_stmt, if_exp, and_, or_): a
// Function traced with autograph = false stages none; a ConversionError names `construct` and
// `loc`. (ag::cond and ag::while_loop do not call it.)
void check_autograph(const char* construct, SourceLoc loc);

// Staged forms: build If/While nodes in the graph being traced.
void staged_if(const Tensor& cond, FnRef<void()> then_fn, FnRef<void()> else_fn, std::span<StateVar> vars, SourceLoc loc);
// `what` names the construct in errors ("while loop", "for loop").
void staged_while(FnRef<Tensor()> cond_fn, FnRef<void()> body_fn, std::span<StateVar> vars, SourceLoc loc,
                  const char* what = "while loop");
// A staged loop over the first dim of `iterable` from index `start`; `extra_test` (may be
// null) is checked before each iteration (how `break` is lowered).
void staged_for(const Tensor& iterable, int64_t start, FnRef<Tensor()>* extra_test, FnRef<void(Tensor)> body,
                std::span<StateVar> vars, SourceLoc loc);
std::vector<Tensor> staged_cond(const Tensor& cond, FnRef<std::vector<Tensor>()> then_fn,
                                FnRef<std::vector<Tensor>()> else_fn, SourceLoc loc);
// Evaluates a loop condition for a native (unrolled) iteration. If it turns out symbolic the
// ops it added are rolled back and nullopt-like false is returned with `symbolic` set.
Tensor probe_condition(FnRef<Tensor()> cond_fn, std::span<StateVar> vars, bool& symbolic, SourceLoc loc);
// Reports a loop on tensors that ran `iterations` times natively while tracing (its condition,
// or what it iterates, a concrete tensor), each iteration's ops copied into the graph: counted
// for AG_LOG=trace, and from kWarnUnrolledIterations on a warning (once per loop) that names
// the loop and how to stage it. Never throws.
void note_unrolled_loop(int64_t iterations, SourceLoc loc) noexcept;
inline constexpr int64_t kWarnUnrolledIterations = 32;
bool tracing();

// Counts a loop's native iterations while tracing and reports them when the loop ends.
class UnrolledLoop {
 public:
  explicit UnrolledLoop(SourceLoc loc) : loc_(loc), tracing_(tracing()) {}
  UnrolledLoop(const UnrolledLoop&) = delete;
  UnrolledLoop& operator=(const UnrolledLoop&) = delete;
  ~UnrolledLoop() {
    if (iterations_ > 0) note_unrolled_loop(iterations_, loc_);
  }
  void iteration() { iterations_ += tracing_ ? 1 : 0; }

 private:
  SourceLoc loc_;
  bool tracing_;
  int64_t iterations_ = 0;
};

}  // namespace ag::detail
