// The messages of run-time errors detected by JIT code, worded like the eager kernels' errors and
// naming the op and its source line.
#include <fmt/format.h>

#include "ag/detail/check_numerics.h"
#include "ag/detail/ops_internal.h"
#include "call_state.h"

namespace ag::jit {

void throw_failure(const NodeInfo& info, FailKind kind, int64_t a, int64_t b) {
  const Node& n = *info.node;
  const char* op = detail::user_op_name(n.op);
  const std::string at = detail::at(n.loc);
  auto shape_of_input = [&](size_t k) { return k < info.input_types.size() ? info.input_types[k].shape.str() : std::string("?"); };
  switch (kind) {
    case FailKind::DivisionByZero: throw InvalidArgumentError(fmt::format("{}: integer division by zero{}", op, at));
    case FailKind::NegativePower:
      throw InvalidArgumentError(fmt::format("{}: integers to negative integer powers are not allowed (exponent {}){}", op, a, at));
    case FailKind::GatherIndex: {
      const int64_t rank = info.input_types.empty() ? 1 : info.input_types[0].shape.rank();
      const int64_t axis = n.attrs.axis < 0 ? n.attrs.axis + rank : n.attrs.axis;
      throw InvalidArgumentError(fmt::format("{}: index {} is out of range [0, {}) for axis {} of shape {}{}", op, a, b, axis,
                                             shape_of_input(0), at));
    }
    case FailKind::ScatterIndex:  // worded as the eager kernel's (index_kernels.cpp, out_of_range)
      throw InvalidArgumentError(fmt::format("{}: index {} is out of range [0, {}){}", op, a, b, at));
    case FailKind::Broadcast:
      throw InvalidArgumentError(fmt::format("{}: shapes are not broadcast-compatible at run time (a dim is {} vs {}){}", op, a, b, at));
    case FailKind::Reshape:
      throw InvalidArgumentError(fmt::format("{}: cannot reshape a tensor of {} elements to {} ({} elements known){}", op, a,
                                   n.attrs.shape.str(), b, at));
    case FailKind::ConcatDims:
      throw InvalidArgumentError(fmt::format("{}: dims other than the axis must match, got {} and {}{}", op, a, b, at));
    case FailKind::SliceRange:
      throw InvalidArgumentError(fmt::format("{}: slice end {} is out of range for a dim of size {}{}", op, a, b, at));
    case FailKind::ArgEmpty:
      throw InvalidArgumentError(fmt::format("{}: cannot take the arg-{} of an empty dimension (shape {}){}", op,
                                             n.op == OpKind::ArgMax ? "max" : "min", shape_of_input(0), at));
    case FailKind::RangeDeltaZero: throw InvalidArgumentError(fmt::format("{}: delta must not be 0{}", op, at));
    case FailKind::RangeTooLarge:
      throw InvalidArgumentError(fmt::format("{}: a range of {} elements is too large{}", op, a, at));
    case FailKind::MatMulInner:
      throw InvalidArgumentError(fmt::format("{}: inner dimensions differ at run time ({} vs {}){}", op, a, b, at));
    case FailKind::Squeeze:
      throw InvalidArgumentError(fmt::format("{}: cannot squeeze a dim of size {}{}", op, a, at));
    case FailKind::EnsureShape:
      throw InvalidArgumentError(fmt::format("{}: dim {} of the tensor has size {}, expected shape {}{}", op, b, a,
                                             n.attrs.shape.str(), at));
    case FailKind::NonFinite:
      detail::throw_non_finite(n.attrs, n.outputs[0], a, static_cast<detail::NonFiniteKind>(b), n.loc);
    case FailKind::RuntimeType:
      throw InternalError(fmt::format("jit: {} returned a value of rank {} where rank {} was compiled{}", op, a, b, at));
  }
  throw InternalError("jit: unknown failure kind");
}

}  // namespace ag::jit
