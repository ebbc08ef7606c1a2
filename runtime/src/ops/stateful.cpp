// Side effects: ag::print (eager, and staged as a Print node), Variable reads/assignments, and
// random draws (random.cpp).
#include <fmt/format.h>

#include "../trace/frame.h"
#include "ag/detail/communicator.h"
#include "ag/detail/log.h"
#include "ag/detail/variable_state.h"
#include "ag/print.h"
#include "kernels.h"

namespace ag::detail {

std::string format_print(const Attrs& attrs, std::span<const Tensor> tensors) {
  std::string line;
  size_t t = 0, s = 0;
  for (int64_t i = 0; i < attrs.tensor_mask().rank(); ++i) {
    if (i) line += ' ';
    line += attrs.tensor_mask()[i] ? format_values(tensors[t++]) : attrs.strings[s++];
  }
  line += '\n';
  return line;
}

void print_impl(std::vector<PrintArg> args) {
  Attrs a;
  std::vector<Tensor> tensors;
  for (auto& arg : args) {
    a.tensor_mask().push_back(arg.is_tensor ? 1 : 0);
    if (arg.is_tensor) tensors.push_back(std::move(arg.tensor));
    else a.strings.push_back(std::move(arg.text));
  }
  if (is_tracing()) {
    trace_node(OpKind::Print, tensors, std::move(a), {}, {}, {});
    return;
  }
  for (const Tensor& t : tensors) check_readable(t, OpKind::Print, {});
  print_line(format_print(a, tensors));
}

// The value a Variable gets from an assignment op, checked against its dtype and shape.
Tensor assigned_value(OpKind op, const VariableState& v, const Tensor& current, const Tensor& operand, SourceLoc loc) {
  Tensor next;
  if (op == OpKind::AssignVariable) {
    next = operand;
    if (operand.rank() == 0 && v.shape.rank() != 0) {
      Attrs a;
      a.shape = v.shape;
      next = eval_op(OpKind::Fill, {&operand, 1}, a, loc);
    }
  } else {
    const Tensor in[2] = {current, operand};
    next = eval_op(op == OpKind::AssignAddVariable ? OpKind::Add : OpKind::Sub, in, Attrs::none(), loc);
  }
  if (!(next.shape() == v.shape))
    throw ValueError(fmt::format("{}: {} has shape {}, the new value has shape {}; a Variable's shape never changes{}",
                                 user_op_name(op), v.describe(), v.shape.str(), next.shape().str(), at(loc)));
  return next;
}

Tensor stateful_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& type, SourceLoc loc) {
  switch (op) {
    case OpKind::Print: print_line(format_print(attrs, in)); return {};
    case OpKind::Assert: check_assertion(in, attrs, loc); return {};
    case OpKind::ReadVariable: return attrs.variable->read();
    case OpKind::AssignVariable:
    case OpKind::AssignAddVariable:
    case OpKind::AssignSubVariable: {
      VariableState& v = *attrs.variable;
      std::lock_guard lock(v.mu);  // read-modify-write is atomic per variable
      v.value = assigned_value(op, v, v.value, in[0], loc);
      return v.value;
    }
    case OpKind::RandomUniform:
    case OpKind::RandomNormal: return random_kernel(op, attrs);
    case OpKind::PureCallback:
    case OpKind::IoCallback: return run_callback(op, in, attrs, loc);
    case OpKind::AllReduce:
    case OpKind::CollectiveBroadcast:
    case OpKind::AllGather: return collective_kernel(op, in, attrs, type, loc);
    default: throw InternalError("stateful_kernel: " + std::string(op_name(op)));
  }
}

std::string VariableState::describe() const {
  const std::string type = fmt::format("{}{}", dtype_name(dtype), shape.str());
  return name.empty() ? fmt::format("variable #{} ({})", id, type) : fmt::format("variable '{}' ({})", name, type);
}

}  // namespace ag::detail
