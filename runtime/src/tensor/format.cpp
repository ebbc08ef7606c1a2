// Text forms of tensors: tf.print's values ([1 2 3]) and the tf.Tensor(...) repr.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "ag/graph/graph.h"
#include "ag/print.h"
#include "ag/detail/tensor_list.h"

namespace ag {
namespace {

// Print: tf.print's text of the values. Repr: NumPy's str() of them, as in TensorFlow's
// "tf.Tensor(...)"; ReprScalar: a rank-0 value, which NumPy writes as a scalar (2.0, not 2.).
enum class Style { Print, Repr, ReprScalar };

// The shortest decimal that reads back as the same 16-bit float (NumPy prints float16(0.1) as
// 0.1, not as the float32 0.099975586 it widens to).
template <class Half>
std::string shortest_half(float v) {
  for (int digits = 1; digits < 9; ++digits) {
    const float shortest = std::strtof(fmt::format("{:.{}g}", v, digits).c_str(), nullptr);
    if (Half(shortest).bits == Half(v).bits) return fmt::format("{}", shortest);  // positional as float32's
  }
  return fmt::format("{}", v);
}

std::string format_element(const Tensor& t, int64_t i, Style style) {
  switch (t.dtype()) {
    case DType::Bool: {
      bool b = static_cast<const bool*>(detail::impl_of(t)->data)[i];
      if (style == Style::Print) return b ? "1" : "0";
      return b ? "True" : "False";
    }
    case DType::Int32: return fmt::format("{}", static_cast<const int32_t*>(detail::impl_of(t)->data)[i]);
    case DType::Int64: return fmt::format("{}", static_cast<const int64_t*>(detail::impl_of(t)->data)[i]);
    case DType::UInt8:
    case DType::Int8: return fmt::format("{}", detail::element_as_int(t, i));
    case DType::Float32:
    case DType::Float64:
    case DType::Float16:
    case DType::BFloat16: {
      double v = detail::element_as_double(t, i);
      if (std::isnan(v)) return "nan";
      if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
      const auto f = static_cast<float>(v);
      std::string s = t.dtype() == DType::Float64    ? fmt::format("{}", v)
                      : t.dtype() == DType::Float16  ? shortest_half<Float16>(f)
                      : t.dtype() == DType::BFloat16 ? shortest_half<BFloat16>(f)
                                                     : fmt::format("{}", f);
      // tf.print writes an integral float as "2", NumPy's arrays as "2.", NumPy's scalars as "2.0".
      if (s.find_first_of(".e") == std::string::npos) {
        if (style == Style::Repr) s += ".";
        if (style == Style::ReprScalar) s += ".0";
      }
      return s;
    }
    case DType::List: break;
  }
  return "?";
}

// Between the items of dim `d` of a rank-`rank` tensor: a space in the last dim, otherwise
// one newline per remaining dim and an indent (TensorFlow's PrintDimSpacing, NumPy's layout).
void append_spacing(int d, int64_t rank, std::string& out) {
  if (d + 1 == rank) {
    out += ' ';
    return;
  }
  out.append(static_cast<size_t>(rank - d - 1), '\n');
  out.append(static_cast<size_t>(d + 1), ' ');
}

// Recursively formats dim `d` starting at flat offset `base`, eliding dims longer than 6 to
// their first and last 3 items.
void format_dim(const Tensor& t, int d, int64_t base, bool summarize, Style style, std::string& out) {
  const Shape& s = t.shape();
  const int64_t n = s[d];
  int64_t stride = 1;
  for (int64_t k = d + 1; k < s.rank(); ++k) stride *= s[k];
  constexpr int64_t kEdge = 3;
  out += '[';
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) append_spacing(d, s.rank(), out);
    if (summarize && n > 2 * kEdge && i == kEdge) {
      out += "...";
      append_spacing(d, s.rank(), out);
      i = n - kEdge;
    }
    if (d + 1 == s.rank()) out += format_element(t, base + i * stride, style);
    else format_dim(t, d + 1, base + i * stride, summarize, style, out);
  }
  out += ']';
}

std::string format_concrete(const Tensor& t, Style style, bool summarize) {
  if (t.dtype() == DType::List) {
    const auto& l = detail::list_of(t);
    return fmt::format("<TensorArray of {} {} elements>", l.size, dtype_name(l.elem_dtype));
  }
  if (t.rank() == 0) return format_element(t, 0, style == Style::Repr ? Style::ReprScalar : style);
  if (style == Style::Repr && t.num_elements() == 0) return "[]";  // NumPy: any empty array
  std::string out;
  format_dim(t, 0, 0, summarize, style, out);
  return out;
}

}  // namespace

namespace detail {
// The name of a symbolic tensor's node (trace/frame.cpp): a parameter's name, else the op's.
std::string symbolic_name(const Tensor& t);

std::string format_values(const Tensor& t) {
  if (!t.has_value()) return "<no value>";
  if (t.is_symbolic()) return t.str();
  return format_concrete(t, Style::Print, /*summarize=*/true);
}

std::string format_all_values(const Tensor& t) {
  if (!t.has_value() || t.is_symbolic()) return format_values(t);
  return format_concrete(t, Style::Print, /*summarize=*/false);
}
}  // namespace detail

std::string Tensor::str() const {
  if (!has_value()) return "Tensor(<no value>)";
  if (is_symbolic())
    return fmt::format("Tensor(\"{}:{}\", shape={}, dtype={})", detail::symbolic_name(*this), impl_->output,
                       has_unknown_rank() ? "<unknown>" : shape().tf_str(), dtype_name(dtype()));
  const bool summarize = num_elements() > 1000;  // NumPy's threshold
  std::string values = format_concrete(*this, Style::Repr, summarize);
  // TensorFlow starts a multi-line value on its own line.
  if (values.find('\n') != std::string::npos) values.insert(0, 1, '\n');
  return fmt::format("tf.Tensor({}, shape={}, dtype={})", values, shape().tf_str(), dtype_name(dtype()));
}

void Tensor::throw_unknown_rank() const {
  throw ValueError(fmt::format(
      "the symbolic tensor {}:{} ({}[*]) has an unknown rank while tracing (it comes from an unknown-rank "
      "TensorSpec, or from a staged if whose branches give it different ranks), so its static shape and rank "
      "do not exist: check has_unknown_rank(), read the run-time shape with ag::shape_of, or give it a rank "
      "with ag::ensure_shape",
      detail::symbolic_name(*this), impl_->output, dtype_name(impl_->dtype)));
}

std::string TensorType::str() const {
  if (dtype == DType::List)
    return fmt::format("list<{}{}{}>", dtype_short_name(elem_dtype), rank_unknown ? "[*]" : shape.str(),
                       elem_shape_varies ? ", any shape" : "");
  return fmt::format("{}{}", dtype_short_name(dtype), rank_unknown ? "[*]" : shape.str());
}

}  // namespace ag
