// ag::Variable: state captured by reference; reads and assignments are staged while tracing.
#include "ag/variable.h"

#include <atomic>
#include <fmt/format.h>

#include "../trace/frame.h"
#include "ag/detail/ops_internal.h"
#include "ag/detail/tape.h"
#include "ag/detail/variable_state.h"

namespace ag {
namespace detail {
Tensor assigned_value(OpKind op, const VariableState& v, const Tensor& current, const Tensor& operand, SourceLoc loc);
namespace {
std::atomic<uint64_t> next_variable_id{1};
}  // namespace

uint64_t new_variable_id() { return next_variable_id.fetch_add(1); }

namespace {

Tensor assign_op(OpKind op, const std::shared_ptr<VariableState>& state, const Operand& value) {
  VariableState& v = *state;
  const SourceLoc loc = value.loc();
  Tensor operand = value.is_tensor() ? value.tensor() : Tensor();
  if (!value.is_tensor()) {
    // A C++ scalar is weak, as in binary ops: it takes the Variable's dtype if its kind allows.
    const auto& w = value.scalar();
    if (w.kind == WeakScalar::Float && !is_floating(v.dtype))
      throw TypeError(fmt::format("{}: {} cannot take the floating-point value {}{}", user_op_name(op), v.describe(),
                                  w.f, at(loc)));
    if ((w.kind == WeakScalar::Bool) != (v.dtype == DType::Bool))
      throw TypeError(fmt::format("{}: {} cannot take the C++ {} {}{}", user_op_name(op), v.describe(),
                                  w.kind == WeakScalar::Bool ? "bool" : "number",
                                  w.kind == WeakScalar::Bool ? (w.b ? "true" : "false")
                                  : w.kind == WeakScalar::Int ? std::to_string(w.i)
                                                              : fmt::format("{}", w.f),
                                  at(loc)));
    operand = weak_scalar_as(w, v.dtype, op, loc);
  }
  check_readable(operand, op, loc);
  if (is_tracing()) {
    Attrs a;
    a.variable = state;
    return trace_op(op, {&operand, 1}, a, loc);
  }
  if (operand.is_symbolic()) throw_leaked(operand, loc);
  const TensorType t = type_of(operand);
  Attrs a;
  a.variable = state;
  infer_type(op, {&t, 1}, a, loc);  // dtype/shape errors, worded as in graphs
  std::lock_guard lock(v.mu);
  v.value = assigned_value(op, v, v.value, operand, loc);
  return v.value;
}

}  // namespace
}  // namespace detail

Variable::Variable(const Tensor& init, std::string name) : state_(std::make_shared<detail::VariableState>()) {
  if (!init.has_value()) detail::throw_undefined(init, "ag::Variable", {});
  if (init.is_symbolic())
    throw ConversionError(
        "an ag::Variable's initial value must not depend on the traced function's arguments: create it from "
        "constants (or outside the function) and assign() it inside");
  if (detail::TraceFrame* f = detail::current_frame()) {
    const std::string fn = f->root->function_name ? *f->root->function_name : std::string("function");
    if (f->root->singleton_check)
      throw ValueError(fmt::format(
          "'{}' creates an ag::Variable on every trace: its first call traced it a second time, as TensorFlow does "
          "for a function that creates Variables, and it created one again, so every retrace would make a new "
          "Variable (TensorFlow's singleton rule). Create the Variable outside the function, or only when it does "
          "not exist yet (a std::optional or std::unique_ptr member set on the first trace)",
          fn));
    if (!f->root->first_trace)
      throw ValueError(fmt::format(
          "'{}' created an ag::Variable on a later trace: a traced function may create Variables on its first trace "
          "only (TensorFlow's singleton rule). Create the Variable outside the function, or only when it does not "
          "exist yet",
          fn));
    ++f->root->variables_created;
  }
  state_->value = init;
  state_->dtype = init.dtype();
  state_->shape = init.shape();
  state_->name = std::move(name);
  state_->id = detail::new_variable_id();
}

Tensor Variable::value() const {
  Tensor value;
  if (detail::is_tracing()) {
    Attrs a;
    a.variable = state_;
    value = detail::trace_op(OpKind::ReadVariable, {}, a, {});
  } else {
    value = state_->read();
  }
  if (detail::t_variable_reads) [[unlikely]]
    detail::t_variable_reads->push_back(state_);
  if (detail::tapes_alive()) [[unlikely]]
    return detail::tape_variable_read(state_, std::move(value));  // a watched read
  return value;
}

Tensor Variable::assign(Operand v) { return detail::assign_op(OpKind::AssignVariable, state_, v); }
Tensor Variable::assign_add(Operand v) { return detail::assign_op(OpKind::AssignAddVariable, state_, v); }
Tensor Variable::assign_sub(Operand v) { return detail::assign_op(OpKind::AssignSubVariable, state_, v); }

Variable Variable::from_state(std::shared_ptr<detail::VariableState> state) {
  Variable v;
  v.state_ = std::move(state);
  return v;
}

DType Variable::dtype() const { return state_->dtype; }
const Shape& Variable::shape() const { return state_->shape; }
const std::string& Variable::name() const { return state_->name; }

}  // namespace ag
