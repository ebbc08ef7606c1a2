// pure_callback / io_callback: staging the node, and running the callback (the eager kernel,
// which the interpreter and compiled code call too) with its result checked against its spec.
#include "ag/callback.h"

#include <fmt/format.h>

#include <cxxabi.h>

#include "kernels.h"

namespace ag::detail {

Tensor stage_callback(OpKind op, std::shared_ptr<const Callback> callback, const TensorSpec& result,
                      std::span<const Tensor> args, SourceLoc loc) {
  const char* name = user_op_name(op);
  if (result.has_unknown_rank() || !result.shape().is_fully_defined())
    throw ValueError(fmt::format("{}: the result spec {} needs a fully defined shape{}", name, result.str(), at(loc)));
  Attrs a;
  a.dtype = result.dtype();
  a.shape = result.shape();
  a.callback = std::move(callback);
  return apply_op(op, args, a, loc);
}

Tensor run_callback(OpKind op, std::span<const Tensor> in, const Attrs& attrs, SourceLoc loc) {
  const char* name = user_op_name(op);
  Tensor out;
  try {
    out = attrs.callback->fn(in);
  } catch (const std::exception& e) {
    int status = 0;
    char* type = abi::__cxa_demangle(typeid(e).name(), nullptr, nullptr, &status);
    const std::string what = fmt::format("{}: the callback threw {}: {}{}", name, status == 0 ? type : typeid(e).name(),
                                         e.what(), at(loc));
    std::free(type);
    throw InvalidArgumentError(what);
  }
  if (!out.has_value() || out.dtype() != attrs.dtype || !(out.shape() == attrs.shape))
    throw InvalidArgumentError(fmt::format("{}: the callback returned {}, but its result spec is {}{}{}", name,
                                           out.has_value() ? fmt::format("{}{}", dtype_name(out.dtype()), out.shape().str()) : std::string("no value"),
                                           dtype_name(attrs.dtype), attrs.shape.str(), at(loc)));
  return out;
}

}  // namespace ag::detail
