// ag::assert_true and the comparison asserts: the Assert op's API, and its kernel (which builds
// its message only when the assertion fails).
#include <fmt/format.h>

#include "../trace/frame.h"
#include "ag/debugging.h"
#include "ag/print.h"
#include "kernels.h"

namespace ag {
namespace detail {

// The row-major multi-index of flat element `k` of `shape`: "[1, 0]".
std::string element_index_str(const Shape& shape, int64_t k) {
  std::vector<int64_t> idx(static_cast<size_t>(shape.rank()));
  for (int64_t d = shape.rank(); d-- > 0;) {
    idx[static_cast<size_t>(d)] = shape[d] ? k % shape[d] : 0;
    k = shape[d] ? k / shape[d] : 0;
  }
  std::string out = "[";
  for (size_t d = 0; d < idx.size(); ++d) out += (d ? ", " : "") + std::to_string(idx[d]);
  return out + "]";
}

namespace {

void record_or_check(std::vector<Tensor> inputs, std::string message, std::string what, SourceLoc loc) {
  const Tensor& cond = inputs[0];
  check_readable(cond, OpKind::Assert, loc);
  if (cond.dtype() != DType::Bool)
    throw TypeError(fmt::format("{}: the condition must be a bool tensor, got {}{}{}", what, dtype_name(cond.dtype()),
                                cond.shape().str(), at(loc)));
  Attrs a;
  a.strings = {std::move(message), std::move(what)};
  // While tracing, even a concrete condition is staged: the assert may sit in a branch or loop
  // that never runs, and it must fail when (and only when) the compiled code reaches it.
  if (is_tracing()) {
    trace_node(OpKind::Assert, inputs, std::move(a), {}, {}, loc);
    return;
  }
  for (const Tensor& t : inputs) check_readable(t, OpKind::Assert, loc);
  check_assertion(inputs, a, loc);
}

Tensor operand_tensor(const Operand& o, const Operand& other, OpKind op, SourceLoc loc) {
  if (o.is_tensor()) return o.tensor();
  const DType d = other.is_tensor() ? other.tensor().dtype() : o.scalar().natural_dtype;
  return weak_scalar_as(o.scalar(), d, op, loc);
}

void assert_compare(OpKind op, const char* name, const Operand& x, const Operand& y, std::string message,
                    SourceLoc loc) {
  Tensor cond = apply_op(op, {operand_tensor(x, y, op, loc), operand_tensor(y, x, op, loc)}, Attrs::none(), loc);
  std::vector<Tensor> in = {std::move(cond), operand_tensor(x, y, op, loc), operand_tensor(y, x, op, loc)};
  record_or_check(std::move(in), std::move(message), fmt::format("{}(x, y)", name), loc);
}

}  // namespace

void check_assertion(std::span<const Tensor> in, const Attrs& attrs, SourceLoc loc) {
  const Tensor& cond = in[0];
  const bool* p = static_cast<const bool*>(detail::impl_of(cond)->data);
  const int64_t n = cond.num_elements();
  int64_t first = -1, failed = 0;
  for (int64_t i = 0; i < n; ++i)
    if (!p[i]) {
      if (first < 0) first = i;
      ++failed;
    }
  if (failed == 0) return;
  // An assert agc added itself (a variable with no value after a zero-trip loop): its message.
  if (attrs.strings[1].empty()) throw InvalidArgumentError(attrs.strings[0] + at(loc));
  // The failure path: build the message.
  std::string msg = "assertion failed";
  if (!attrs.strings[0].empty()) msg += ": " + attrs.strings[0];
  const std::string& what = attrs.strings[1];
  if (cond.rank() == 0) msg += fmt::format(": {} is false", what);
  else
    msg += fmt::format(": {} is false at {} of {} elements, first at index {}", what, failed, n,
                       element_index_str(cond.shape(), first));
  const char* names[] = {"x", "y"};
  for (size_t k = 1; k < in.size() && k <= 2; ++k) msg += fmt::format("; {} = {}", names[k - 1], format_values(in[k]));
  throw InvalidArgumentError(msg + at(loc));
}

}  // namespace detail

void assert_true(const Tensor& condition, std::string message, Loc loc) {
  detail::record_or_check({condition}, std::move(message), "condition", loc);
}

void assert_equal(Operand x, Operand y, std::string message, Loc loc) {
  detail::assert_compare(OpKind::Equal, "ag::assert_equal", x, y, std::move(message), loc);
}
void assert_less(Operand x, Operand y, std::string message, Loc loc) {
  detail::assert_compare(OpKind::Less, "ag::assert_less", x, y, std::move(message), loc);
}
void assert_greater(Operand x, Operand y, std::string message, Loc loc) {
  detail::assert_compare(OpKind::Greater, "ag::assert_greater", x, y, std::move(message), loc);
}

}  // namespace ag
