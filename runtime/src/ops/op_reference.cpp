// The op reference (docs/ops.md), generated from the op table: every graph op with the C++ that
// makes it, the dtypes its type rule takes, its gradient, how compiled code computes it, when it
// raises, and its TensorFlow / NumPy name. `ag-opt --emit=op-table` prints it; a test keeps the
// committed page equal to it.
#include <fmt/format.h>

#include <map>
#include <string>

#include "ag/detail/ops_internal.h"
#include "ag/graph/op.h"

namespace ag {
namespace {

// What each type rule accepts, in words (the rules themselves: ops/type_rules/).
std::string dtypes_of(std::string_view rule) {
  static const std::map<std::string_view, std::string_view> words = {
      {"constant", "any"}, {"given", "any"}, {"range", "numeric"}, {"fill", "any"}, {"fill_like", "any"},
      {"identity", "any"}, {"unary_numeric", "numeric"}, {"unary_float", "floating"}, {"unary_bool", "bool"},
      {"cast", "any to any"}, {"binary", "numeric, the same for both"}, {"binary_float", "floating"},
      {"compare", "numeric (`==`, `!=`: bool too) to bool"}, {"logical", "bool"}, {"select", "bool condition, any values"},
      {"reduce", "numeric (any, all: bool)"}, {"scan", "numeric"}, {"arg_reduce", "numeric to int64"},
      {"matmul", "numeric, not 8-bit"}, {"conv2d", "floating"}, {"conv2d_backprop_input", "floating"},
      {"conv2d_backprop_filter", "floating"}, {"fused_conv2d", "floating"}, {"pool", "floating"}, {"pool_grad", "floating"}, {"pool_grad_grad", "floating"},
      {"argsort", "numeric to int32"}, {"take_along_axis", "any; int32/int64 indices"},
      {"take_along_axis_grad", "floating; int32/int64 indices"}, {"scatter_rows", "numeric; int32/int64 indices"},
      {"transpose", "any"}, {"reshape", "any"}, {"concat", "any, the same for all"}, {"slice", "any"},
      {"slice_update", "any"}, {"gather", "any; int32/int64 indices"}, {"expand_dims", "any"}, {"squeeze", "any"},
      {"shape_of", "any to int32"}, {"ensure_shape", "any"}, {"print", "any"}, {"assert", "bool condition"},
      {"read_variable", "the Variable's"}, {"assign_variable", "the Variable's (add, sub: compute dtypes)"},
      {"random", "float32, float64"}, {"list_write", "the TensorArray's"}, {"list_read", "the TensorArray's"},
      {"list_stack", "the TensorArray's"}, {"list_size", "to int32"}, {"callback", "the result spec's"},
      {"collective", "all_reduce: float32, float64, int32, int64; broadcast, all_gather: any"}};
  const auto it = words.find(rule);
  return it == words.end() ? "" : std::string(it->second);
}

std::string gradient_of(std::string_view rule) {
  if (rule == "none") return "none";
  if (rule == "unsupported") return "not yet (an UnimplementedError)";
  if (rule == "source") return "a watched source";
  if (rule == "control") return "through its sub-graphs";
  if (rule == "custom") return "its gradient sub-graph";
  return fmt::format("`grad_{}`", rule);
}

std::string compiled_as(OpKind op, const OpInfo& info) {
  if (op == OpKind::Identity || op == OpKind::StopGradient) return "view (no copy)";
  if (is_elementwise(op) && op != OpKind::Identity && op != OpKind::StopGradient)
    return info.vector == VectorForm::yes    ? "fused loop, vector code"
           : info.vector == VectorForm::f32  ? "fused loop, vector code (float32)"
           : info.vector == VectorForm::mvec ? "fused loop, vector code (libmvec)"
                                             : "fused loop";
  switch (info.cls) {
    case OpClass::Source:
      return op == OpKind::Const ? "constant" : op == OpKind::Placeholder ? "argument" : op == OpKind::Range ? "loop" : "fused loop";
    case OpClass::Reduce:
    case OpClass::ArgReduce: return "loop nest reading its fused producers";
    case OpClass::Scan: return "loop nest";
    case OpClass::MatMul: return "register-blocked kernel (small, static) or GEMM";
    case OpClass::Window: return "the eager kernel (oneDNN for float32 convolutions)";
    case OpClass::Index:  // jit/src/fusion.h, compiled_scatter
      return op == OpKind::TensorScatterUpdate || op == OpKind::TensorScatterAdd || op == OpKind::UnsortedSegmentSum ||
                     op == OpKind::UnsortedSegmentMax
                 ? "loop reading its fused updates (float32/64, int32/64; else the eager kernel)"
                 : "the eager kernel";
    case OpClass::Layout:
      if (info.cost == OpCost::view) return "view (no copy)";
      if (op == OpKind::Slice) return "view when loops read it, else a copy";
      if (op == OpKind::SliceUpdate) return "in place when x is not read afterwards";
      if (op == OpKind::Gather) return "copy loop; fused into a scatter reading it";
      return op == OpKind::ShapeOf ? "dims" : "copy loop";
    case OpClass::Stateful:
    case OpClass::List: return "runtime call";
    case OpClass::Control: return op == OpKind::CustomGradient ? "removed before lowering" : "branches, loops";
    default: return "";
  }
}

std::string raises_of(RaiseKind r) {
  switch (r) {
    case RaiseKind::never: return "";
    case RaiseKind::dims: return "dims known only at run time";
    case RaiseKind::values: return "on values";
    case RaiseKind::int_values: return "on integer values (division by zero)";
  }
  return "";
}

// A table cell: `|` escaped.
std::string cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string op_reference_markdown() {
  std::string out =
      "# Op reference\n\n"
      "Generated from the op table (`runtime/include/ag/graph/ops.def`) by `ag-opt --emit=op-table`; a test\n"
      "keeps this page equal to it. Every graph op: the C++ that makes it, what its type rule takes,\n"
      "its gradient, how compiled code computes it, when it raises at run time, and its TensorFlow /\n"
      "NumPy / JAX name. The storage dtypes (uint8, int8, float16, bfloat16) run natively in the ops\n"
      "marked *stored*; every other op computes them widened to int32 or float32 and rounds back\n"
      "([eager.md](eager.md#storage-dtypes-uint8-int8-float16-bfloat16)). Functions made of several ops\n"
      "(`softmax`, `gelu`, `pad`, `einsum`, `one_hot`, ...) are listed in [eager.md](eager.md#ops).\n\n"
      "| op | C++ | dtypes | gradient | compiled as | raises | TensorFlow / NumPy |\n"
      "|---|---|---|---|---|---|---|\n";
  for (int i = 0; i < kNumOps; ++i) {
    const auto op = static_cast<OpKind>(i);
    const OpInfo& info = op_info(op);
    std::string dtypes = dtypes_of(info.type_rule);
    if (detail::runs_on_storage_dtypes(op) && info.type_rule != "unary_bool" && info.type_rule != "assert") dtypes += "; *stored*";
    out += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} |\n", info.name, cell(info.user_name), cell(dtypes),
                       gradient_of(info.gradient), compiled_as(op, info), raises_of(info.raises), cell(info.equivalent));
  }
  return out;
}

}  // namespace ag
