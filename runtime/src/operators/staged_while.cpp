// Staged while loops (AutoGraph's while_stmt / tf.while_loop): the condition and the body are
// traced into sub-graphs over the loop variables; loop shapes are inferred by retracing when
// a variable's shape changes in the body; variables with no value before the loop get their
// type from a probe trace of the body and start at zeros.
#include <fmt/format.h>

#include <optional>

#include "ag/construct.h"
#include "ag/detail/log.h"
#include "ag/detail/ops_internal.h"
#include "ag/operators/control_flow.h"
#include "../ops/internal_ops.h"
#include "state_vars.h"

namespace ag::detail {


namespace {

// Loop options set by ag::set_loop_options inside the body being traced (innermost loop).
thread_local LoopOptions* t_loop_options = nullptr;

struct LoopOptionsScope {
  LoopOptions options;
  LoopOptions* saved;
  LoopOptionsScope() : saved(t_loop_options) { t_loop_options = &options; }
  ~LoopOptionsScope() { t_loop_options = saved; }
};

// Traces the body once with the defined variables as placeholders to learn the types of the
// variables that have no value yet (then forgets that trace). A read of one of those before
// the body assigns it can only ever see no value: its error names the variable and the loop.
std::vector<std::optional<TensorType>> probe_undefined(FnRef<void()> body_fn, std::span<StateVar> vars,
                                                       const std::vector<Tensor>& initial, SourceLoc loc,
                                                       const char* what) {
  TraceFrame* outer = current_frame();
  std::vector<std::optional<TensorType>> learned(vars.size());
  const auto cp = outer->checkpoint();
  {
    TraceFrame probe(outer, outer->root, "probe", loc);
    FrameScope scope(&probe);
    try {
      for (size_t i = 0; i < vars.size(); ++i) {
        if (initial[i].has_value())
          write_var(vars[i], probe.add_param(value_type(*outer, initial[i], loc), display_name(vars[i])));
        else if (!is_generated_name(vars[i].name) && holds_tensor(vars[i]))
          write_var(vars[i], undefined_var(fmt::format("{} is read inside the tensor-dependent {}{} before it has a "
                                                       "value: give it a value before the loop",
                                                       describe_var(vars[i]), what, where(loc))));
      }
      body_fn();
      check_lengths(vars, what, loc);
      for (size_t i = 0; i < vars.size(); ++i) {
        if (initial[i].has_value() || !holds_tensor(vars[i])) continue;
        Tensor v = read_var(vars[i]);
        if (v.has_value()) learned[i] = value_type(probe, v, loc);
        else learned[i] = undefined_type(v);  // set in one branch of an if in the body
      }
    } catch (...) {
      write_vars(vars, initial);
      outer->rollback(cp);
      throw;
    }
  }
  write_vars(vars, initial);
  outer->rollback(cp);
  return learned;
}

struct LoopTrace {
  std::unique_ptr<TraceFrame> cond, body;
  std::vector<TensorType> body_types;  // types of the variables after one iteration
  LoopOptions options;                 // set_loop_options found in the body
};

LoopTrace trace_loop(FnRef<Tensor()> cond_fn, FnRef<void()> body_fn, std::span<StateVar> vars,
                     const std::vector<size_t>& carried, const std::vector<TensorType>& types,
                     const std::vector<Tensor>& initial, SourceLoc loc, const char* what) {
  TraceFrame* outer = current_frame();
  LoopTrace lt;
  auto bind_params = [&](TraceFrame& f) {
    for (size_t k = 0; k < carried.size(); ++k) {
      write_var(vars[carried[k]], f.add_param(types[k], display_name(vars[carried[k]])));
    }
  };
  try {
    lt.cond = std::make_unique<TraceFrame>(outer, outer->root, "cond", loc);
    {
      FrameScope scope(lt.cond.get());
      bind_params(*lt.cond);
      const Tensor c = staged_condition(cond_fn(), what, loc);
      lt.cond->graph.results = {lt.cond->value_of(c, OpKind::While, loc)};
    }
    lt.body = std::make_unique<TraceFrame>(outer, outer->root, "body", loc);
    {
      FrameScope scope(lt.body.get());
      LoopOptionsScope options;
      bind_params(*lt.body);
      body_fn();
      check_lengths(vars, what, loc);
      lt.options = options.options;
      for (size_t k = 0; k < carried.size(); ++k) {
        const StateVar& v = vars[carried[k]];
        const Tensor out = read_var(v);
        if (!out.has_value())
          throw ConversionError(fmt::format("{} has no value at the end of the body of the tensor-dependent "
                                            "{}{} (it is assigned in only one branch of an if inside the loop?)",
                                            describe_var(v), what, where(loc)));
        const ValueId id = materialize(*lt.body, out, loc);
        const TensorType& t = lt.body->graph.type(id);
        if (t.dtype != types[k].dtype || (t.dtype == DType::List && t.elem_dtype != types[k].elem_dtype))
          throw ConversionError(fmt::format(
              "{} is {} before the tensor-dependent {}{} but {} after an iteration; a loop variable must "
              "keep its dtype (use ag::cast)",
              describe_var(v), types[k].str(), what, where(loc), t.str()));
        // (A variable of unknown rank before the loop may take any rank: the join keeps it unknown.)
        if (!types[k].rank_unknown && !t.is_untyped_list() &&
            (t.has_unknown_rank() || t.shape.rank() != types[k].shape.rank()))
          throw ConversionError(fmt::format(
              "{} has rank {} before the tensor-dependent {}{} but rank {} after an iteration; a loop "
              "variable must keep its rank",
              describe_var(v), types[k].shape.rank(), what, where(loc),
              t.has_unknown_rank() ? std::string("unknown") : std::to_string(t.shape.rank())));
        lt.body->graph.results.push_back(id);
        lt.body_types.push_back(t);
      }
    }
  } catch (...) {
    write_vars(vars, initial);
    throw;
  }
  write_vars(vars, initial);
  return lt;
}

}  // namespace

void set_loop_options_impl(LoopOptions options) {
  if (t_loop_options) *t_loop_options = std::move(options);
}

namespace {
void staged_while_impl(FnRef<Tensor()> cond_fn, FnRef<void()> body_fn, std::span<StateVar> vars, SourceLoc loc,
                       const char* what, bool counted, bool flagged);
}

void staged_while(FnRef<Tensor()> cond_fn, FnRef<void()> body_fn, std::span<StateVar> vars, SourceLoc loc,
                  const char* what) {
  staged_while_impl(cond_fn, body_fn, vars, loc, what, /*counted=*/false, /*flagged=*/false);
}

namespace {
// counted: the loop already carries the hidden iteration counter of maximum_iterations.
// flagged: the loop already carries the hidden "it ran" flag of the variables it defines.
void staged_while_impl(FnRef<Tensor()> cond_fn, FnRef<void()> body_fn, std::span<StateVar> vars, SourceLoc loc,
                       const char* what, bool counted, bool flagged) {
  forbid_untraceable(vars, what, loc);
  std::vector<Tensor> initial = read_vars(vars);
  TraceFrame* outer = current_frame();

  // A user's variable with no value before the loop has none after it when the loop runs zero
  // times (docs/guide.md, "Variables first given a value inside a loop"): the loop carries a flag that its body sets, and reading the
  // variable after the loop asserts it (frame.cpp). Generated variables (a `return` inside the
  // loop) are read only where the rewriter's flags say they were set.
  std::vector<size_t> defined_here;
  for (size_t i = 0; i < vars.size(); ++i)
    if (holds_tensor(vars[i]) && !initial[i].has_value() && !is_generated_name(vars[i].name)) defined_here.push_back(i);
  if (!defined_here.empty() && !flagged) {
    Tensor ran(false);
    std::vector<StateVar> with_flag(vars.begin(), vars.end());
    with_flag.push_back(make_state_var(ran, "ag__loop_ran"));
    auto flag_body = [&] {
      ran = Tensor(true);
      body_fn();
    };
    staged_while_impl(cond_fn, flag_body, with_flag, loc, what, counted, /*flagged=*/true);
    const std::vector<Tensor> after = read_vars(vars);
    for (size_t i : defined_here) {
      if (!after[i].is_symbolic()) continue;
      outer->root->defined_checks.push_back(
          {ran, fmt::format("{} has no value: it is first given one inside the tensor-dependent {}{}, which ran zero "
                            "times; give it a value before the loop",
                            describe_var(vars[i]), what, where(loc))});
      detail::impl_of(after[i])->defined_check = &outer->root->defined_checks.back();
    }
    return;
  }

  // Variables with no value before the loop (AutoGraph's _try_handling_undefineds; docs/guide.md, "The staging rules"):
  // they start at zeros of the type one iteration gives them. After a zero-trip loop a user's
  // variable is never read as those zeros: the flagged loop above asserts before each read.
  bool any_undefined = false;
  for (size_t i = 0; i < vars.size(); ++i) any_undefined |= holds_tensor(vars[i]) && !initial[i].has_value();
  if (any_undefined) {
    auto learned = probe_undefined(body_fn, vars, initial, loc, what);
    for (size_t i = 0; i < vars.size(); ++i)
      if (learned[i]) initial[i] = zeros_of_type(*learned[i]);
  }
  std::vector<size_t> carried;
  std::vector<TensorType> types;
  for (size_t i = 0; i < vars.size(); ++i)
    if (initial[i].has_value()) {
      carried.push_back(i);
      types.push_back(value_type(*outer, initial[i], loc));
    }

  // Trace; retrace while a loop variable's shape generalizes (each retrace only adds unknown
  // dims, so this ends), or when set_loop_options pins shapes or an iteration limit.
  LoopOptions options;
  LoopTrace lt;
  for (int attempt = 0;; ++attempt) {
    lt = trace_loop(cond_fn, body_fn, vars, carried, types, initial, loc, what);
    if (!lt.options.shape_invariants.empty() || lt.options.maximum_iterations >= 0) options = lt.options;
    std::vector<TensorType> next = types;
    for (size_t k = 0; k < carried.size(); ++k) {
      next[k] = join_types(types[k], lt.body_types[k]);
      for (const auto& [var, shape] : options.shape_invariants)
        if (var == vars[carried[k]].ptr) {
          if (shape.rank() != lt.body_types[k].shape.rank() || !shape.is_compatible_with(lt.body_types[k].shape))
            throw ConversionError(fmt::format("the shape invariant {} of {} does not fit its shape {} after an "
                                              "iteration of the {}{}",
                                              shape.str(), describe_var(vars[carried[k]]),
                                              lt.body_types[k].shape.str(), what, where(loc)));
          next[k].shape = shape;
        }
    }
    if (options.maximum_iterations >= 0 && !counted) {
      // set_loop_options(maximum_iterations): start over with a hidden counter in the loop.
      Tensor iterations(int64_t{0});
      const int64_t limit = options.maximum_iterations;
      std::vector<StateVar> with_counter(vars.begin(), vars.end());
      with_counter.push_back(make_state_var(iterations, "ag__iterations"));
      auto counted_cond = [&]() -> Tensor {
        return op(OpKind::LogicalAnd,
                  {op(OpKind::Less, {iterations, Tensor(limit)}, loc), staged_condition(cond_fn(), what, loc)}, loc);
      };
      auto counted_body = [&] {
        iterations = op(OpKind::Add, {iterations, Tensor(int64_t{1})}, loc);
        body_fn();
      };
      staged_while_impl(counted_cond, counted_body, with_counter, loc, what, true, flagged);
      return;
    }
    if (next == types) break;
    if (attempt >= 8) throw InternalError("loop shape inference did not converge");
    if (log_enabled(LogTopic::Trace))
      log_line(fmt::format("agc: trace: retracing the {}{} with generalized loop-variable shapes", what, where(loc)));
    types = std::move(next);
  }

  // Build the While node: loop variables first, then the values the sub-graphs capture.
  std::vector<Tensor> invariants = union_captures({lt.cond.get(), lt.body.get()});
  align_params(*lt.cond, carried.size(), invariants);
  align_params(*lt.body, carried.size(), invariants);
  auto cond_g = std::make_shared<const Graph>(std::move(lt.cond->graph));
  auto body_g = std::make_shared<const Graph>(std::move(lt.body->graph));
  lt.cond->close();
  lt.body->close();
  std::vector<Tensor> inputs;
  for (size_t i : carried) inputs.push_back(initial[i]);
  for (Tensor& t : invariants) inputs.push_back(std::move(t));
  Attrs attrs;
  attrs.loop_vars() = static_cast<int64_t>(carried.size());
  std::vector<Tensor> outs = trace_node(OpKind::While, inputs, attrs, types, {cond_g, body_g}, loc);

  std::vector<Tensor> after = read_vars(vars);
  for (size_t k = 0; k < carried.size(); ++k) after[carried[k]] = outs[k];
  write_vars(vars, after);
}
}  // namespace

Tensor probe_condition(FnRef<Tensor()> cond_fn, std::span<StateVar> vars, bool& symbolic, SourceLoc loc) {
  TraceFrame* frame = current_frame();
  const auto cp = frame->checkpoint();
  const std::vector<Tensor> before = read_vars(vars);
  Tensor c = cond_fn();
  symbolic = c.is_symbolic();
  if (!symbolic) return c;
  const std::vector<Tensor> now = read_vars(vars);
  for (size_t i = 0; i < vars.size(); ++i)
    if (detail::impl_of(now[i]) != detail::impl_of(before[i]))
      throw ConversionError(fmt::format("the condition of the tensor-dependent while loop{} modifies {}; a loop "
                                        "condition must not change variables",
                                        where(loc), describe_var(vars[i])));
  c = Tensor();
  frame->rollback(cp);
  return c;
}

}  // namespace ag::detail

namespace ag {
void set_loop_options(LoopOptions options) { detail::set_loop_options_impl(std::move(options)); }
}  // namespace ag
