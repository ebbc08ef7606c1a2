// Calling ordinary C++ from staged and compiled code (JAX's pure_callback and io_callback,
// TensorFlow's py_function): the callback runs on every call, eagerly, on the interpreter and
// from compiled code, with concrete tensors in and one tensor out. docs/debugging.md, "Callbacks".
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "ag/graph/op.h"
#include "ag/ops.h"
#include "ag/tensor.h"
#include "ag/tensor_spec.h"

namespace ag {

namespace detail {

// What a callback node holds (Attrs::callback): the function, over its inputs in order.
struct Callback {
  std::function<Tensor(std::span<const Tensor>)> fn;
};

Tensor stage_callback(OpKind op, std::shared_ptr<const Callback> callback, const TensorSpec& result,
                      std::span<const Tensor> args, SourceLoc loc);

template <class F, class... Ts>
std::shared_ptr<const Callback> make_callback(F fn) {
  return std::make_shared<const Callback>(Callback{[fn = std::move(fn)](std::span<const Tensor> in) -> Tensor {
    return [&]<size_t... I>(std::index_sequence<I...>) { return Tensor(fn(in[I]...)); }(std::index_sequence_for<Ts...>{});
  }});
}

}  // namespace detail

// The result spec of a callback, with the caller's line (for errors).
struct CallbackResult {
  CallbackResult(TensorSpec spec, Loc loc = Loc::current()) : spec(std::move(spec)), loc(loc) {}  // NOLINT
  TensorSpec spec;
  Loc loc;
};

// fn(args...) -> Tensor, run with concrete tensors on every call; its result must have the
// dtype and (fully defined) shape of `result`, else InvalidArgumentError. Pure: it may be pruned
// when its result is unused, merged with an identical call, or moved out of a staged loop, as
// any op; it has no gradient unless wrapped in ag::custom_gradient. An exception it throws
// becomes an InvalidArgumentError naming the callback's line and the exception's message.
template <class F, class... Ts>
Tensor pure_callback(F fn, CallbackResult result, const Ts&... args) {
  const Tensor in[] = {Tensor(args)..., Tensor()};
  return detail::stage_callback(OpKind::PureCallback, detail::make_callback<F, Ts...>(std::move(fn)), result.spec,
                                std::span<const Tensor>(in, sizeof...(Ts)), result.loc);
}

// The same for a callback with side effects (logging, I/O, counters): never pruned or merged,
// and run in program order with ag::print, asserts and Variable assignments.
template <class F, class... Ts>
Tensor io_callback(F fn, CallbackResult result, const Ts&... args) {
  const Tensor in[] = {Tensor(args)..., Tensor()};
  return detail::stage_callback(OpKind::IoCallback, detail::make_callback<F, Ts...>(std::move(fn)), result.spec,
                                std::span<const Tensor>(in, sizeof...(Ts)), result.loc);
}

}  // namespace ag
