// Staged if and conditional expressions: both branches are traced into sub-graphs, the
// variables they change become the outputs of an If node (AutoGraph's if_stmt / tf.cond).
#include <fmt/format.h>

#include <memory>

#include "ag/construct.h"
#include "ag/detail/ops_internal.h"
#include "ag/operators/logical.h"
#include "state_vars.h"

namespace ag::detail {


namespace {

struct Branch {
  std::unique_ptr<TraceFrame> frame;
  std::vector<Tensor> finals;  // each variable's value at the end of the branch
};

Branch trace_branch(FnRef<void()> fn, std::span<StateVar> vars, const std::vector<Tensor>& initial, const char* name,
                    SourceLoc loc) {
  TraceFrame* outer = current_frame();
  Branch b;
  b.frame = std::make_unique<TraceFrame>(outer, outer->root, name, loc);
  {
    FrameScope scope(b.frame.get());
    try {
      fn();
      check_lengths(vars, "if", loc);
    } catch (...) {
      write_vars(vars, initial);
      throw;
    }
  }
  b.finals = read_vars(vars);
  write_vars(vars, initial);
  return b;
}

std::string branch_name(bool then_branch) { return then_branch ? "then" : "else"; }


// Builds the If node from two traced branches whose graphs return `results[branch]`.
std::vector<Tensor> build_if(const Tensor& cond, Branch& then_b, Branch& else_b,
                             const std::vector<ValueId>& then_results, const std::vector<ValueId>& else_results,
                             const std::vector<TensorType>& types, SourceLoc loc) {
  then_b.frame->graph.results = then_results;
  else_b.frame->graph.results = else_results;
  std::vector<Tensor> operands = union_captures({then_b.frame.get(), else_b.frame.get()});
  align_params(*then_b.frame, 0, operands);
  align_params(*else_b.frame, 0, operands);
  auto then_g = std::make_shared<const Graph>(std::move(then_b.frame->graph));
  auto else_g = std::make_shared<const Graph>(std::move(else_b.frame->graph));
  then_b.frame->close();
  else_b.frame->close();
  std::vector<Tensor> inputs;
  inputs.reserve(operands.size() + 1);
  inputs.push_back(cond);
  for (Tensor& t : operands) inputs.push_back(std::move(t));
  return trace_node(OpKind::If, inputs, Attrs{}, types, {then_g, else_g}, loc);
}

TensorType joined_type(const TensorType& t, const TensorType& e, const std::string& what, SourceLoc loc) {
  if (t.dtype != e.dtype || (t.dtype == DType::List && t.elem_dtype != e.elem_dtype))
    throw ConversionError(fmt::format(
        "{} is {} in the then branch and {} in the else branch of the tensor-dependent if{}; both branches must give "
        "it the same dtype (use ag::cast)",
        what, t.str(), e.str(), where(loc)));
  // Tensors of different ranks join to an unknown rank (TensorFlow's TensorShape(None)); a
  // TensorArray's elements keep one rank.
  if (t.dtype == DType::List && t.shape.rank() != e.shape.rank() && !t.is_untyped_list() && !e.is_untyped_list())
    throw ConversionError(fmt::format(
        "{} holds elements of rank {} in the then branch and rank {} in the else branch of the tensor-dependent "
        "if{}; both branches must give its elements the same rank",
        what, t.shape.rank(), e.shape.rank(), where(loc)));
  return join_types(t, e);
}

}  // namespace

void staged_if(const Tensor& cond_in, FnRef<void()> then_fn, FnRef<void()> else_fn, std::span<StateVar> vars,
               SourceLoc loc) {
  forbid_untraceable(vars, "if", loc);
  const Tensor cond = staged_condition(cond_in, "if", loc);
  const std::vector<Tensor> initial = read_vars(vars);
  Branch then_b = trace_branch(then_fn, vars, initial, "then", loc);
  Branch else_b = trace_branch(else_fn, vars, initial, "else", loc);

  std::vector<size_t> outputs;  // indices of vars that become If outputs
  std::vector<ValueId> then_results, else_results;
  std::vector<TensorType> types;
  std::vector<Tensor> after = initial;
  for (size_t i = 0; i < vars.size(); ++i) {
    const Tensor& init = initial[i];
    const Tensor& t = then_b.finals[i];
    const Tensor& e = else_b.finals[i];
    if (detail::impl_of(t) == detail::impl_of(init) && detail::impl_of(e) == detail::impl_of(init)) continue;
    const bool t_def = t.has_value(), e_def = e.has_value();
    if ((!t_def || !e_def) && (t_def || e_def) && is_generated_name(vars[i].name)) {
      // A generated variable (the return value) set in one branch only: the rewriter guarantees
      // it is read only where it was set, so the other branch carries zeros of its type
      // (AutoGraph's placeholder for undefined return values).
      const TensorType type = t_def ? value_type(*then_b.frame, t, loc) : value_type(*else_b.frame, e, loc);
      (t_def ? else_b.finals[i] : then_b.finals[i]) = zeros_of_type(type);
    }
    const Tensor& t2 = then_b.finals[i];
    const Tensor& e2 = else_b.finals[i];
    if (!t2.has_value() || !e2.has_value()) {
      if (!t_def && !e_def) continue;
      // docs/guide.md, "The staging rules": no value before the if and set in only one branch. It keeps
      // the type that branch gave it, so that a loop around the if can carry it.
      const std::string name = describe_var(vars[i]);
      const TensorType type = t_def ? value_type(*then_b.frame, t2, loc) : value_type(*else_b.frame, e2, loc);
      after[i] = undefined_var(fmt::format("{} is assigned in the {} branch of the tensor-dependent if{} but not in "
                                           "the {} branch, and has no value before the if; assign it in both "
                                           "branches or give it a value before the if",
                                           name, branch_name(t_def), where(loc), branch_name(!t_def)),
                               &type);
      continue;
    }
    const ValueId tv = materialize(*then_b.frame, t2, loc);
    const ValueId ev = materialize(*else_b.frame, e2, loc);
    types.push_back(joined_type(then_b.frame->graph.type(tv), else_b.frame->graph.type(ev), describe_var(vars[i]), loc));
    then_results.push_back(tv);
    else_results.push_back(ev);
    outputs.push_back(i);
  }

  std::vector<Tensor> results = build_if(cond, then_b, else_b, then_results, else_results, types, loc);
  for (size_t k = 0; k < outputs.size(); ++k) after[outputs[k]] = results[k];
  write_vars(vars, after);
}

std::vector<Tensor> staged_cond(const Tensor& cond_in, FnRef<std::vector<Tensor>()> then_fn,
                                FnRef<std::vector<Tensor>()> else_fn, SourceLoc loc) {
  const Tensor cond = staged_condition(cond_in, "conditional expression", loc);
  TraceFrame* outer = current_frame();
  auto trace = [&](FnRef<std::vector<Tensor>()> fn, const char* name, std::vector<Tensor>& values) {
    Branch b;
    b.frame = std::make_unique<TraceFrame>(outer, outer->root, name, loc);
    FrameScope scope(b.frame.get());
    values = fn();
    return b;
  };
  std::vector<Tensor> tv, ev;
  Branch then_b = trace(then_fn, "then", tv);
  Branch else_b = trace(else_fn, "else", ev);
  if (tv.size() != ev.size()) throw ConversionError("the branches of a conditional return different numbers of values" + where(loc));
  std::vector<ValueId> then_results, else_results;
  std::vector<TensorType> types;
  for (size_t i = 0; i < tv.size(); ++i) {
    check_readable(tv[i], OpKind::If, loc);
    check_readable(ev[i], OpKind::If, loc);
    then_results.push_back(then_b.frame->value_of(tv[i], OpKind::If, loc));
    else_results.push_back(else_b.frame->value_of(ev[i], OpKind::If, loc));
    types.push_back(joined_type(then_b.frame->graph.type(then_results.back()), else_b.frame->graph.type(else_results.back()),
                                fmt::format("the value {}", i), loc));
  }
  return build_if(cond, then_b, else_b, then_results, else_results, types, loc);
}

Tensor not_tensor(const Tensor& t, SourceLoc loc) {
  return apply_op(OpKind::LogicalNot, {as_bool_tensor(t, "!", loc)}, Attrs::none(), loc);
}

Tensor as_bool_tensor(const Tensor& t, const char* construct, SourceLoc loc) {
  if (!t.is_symbolic()) return Tensor(truth(t, construct, loc));
  return staged_condition(t, construct, loc);
}

}  // namespace ag::detail
