// Text forms of tensors: tf.print's values ([1 2 3]) and the tf.Tensor(...) repr.
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "ag/graph/graph.h"
#include "ag/print.h"
#include "tensor_list.h"

namespace ag {
namespace {

enum class Style { Print, Repr };

std::string format_element(const Tensor& t, int64_t i, Style style) {
  switch (t.dtype()) {
    case DType::Bool: {
      bool b = static_cast<const bool*>(t.impl()->data)[i];
      if (style == Style::Print) return b ? "1" : "0";
      return b ? "True" : "False";
    }
    case DType::Int32: return fmt::format("{}", static_cast<const int32_t*>(t.impl()->data)[i]);
    case DType::Int64: return fmt::format("{}", static_cast<const int64_t*>(t.impl()->data)[i]);
    case DType::Float32:
    case DType::Float64: {
      double v = detail::element_as_double(t, i);
      std::string s = t.dtype() == DType::Float32 ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
      if (std::isnan(v)) return "nan";
      if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
      // numpy writes integral floats as "2."; tf.print as "2".
      if (style == Style::Repr && s.find_first_of(".e") == std::string::npos) s += ".";
      return s;
    }
    case DType::List: break;
  }
  return "?";
}

// Recursively formats dim `d` starting at flat offset `base`, eliding long dims to 3+3.
void format_dim(const Tensor& t, int d, int64_t base, bool summarize, Style style, std::string& out) {
  const Shape& s = t.shape();
  int64_t n = s[d];
  int64_t stride = 1;
  for (int64_t k = d + 1; k < s.rank(); ++k) stride *= s[k];
  const int64_t edge = 3;
  out += '[';
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * edge && i == edge) {
      out += d + 1 == s.rank() ? "... " : "...\n" + std::string(d + 1, ' ');
      i = n - edge;
    }
    if (d + 1 == s.rank()) out += format_element(t, base + i * stride, style);
    else format_dim(t, d + 1, base + i * stride, summarize, style, out);
    if (i + 1 < n) out += d + 1 == s.rank() ? " " : "\n" + std::string(d + 1, ' ');
  }
  out += ']';
}

std::string format_concrete(const Tensor& t, Style style, bool summarize) {
  if (t.dtype() == DType::List) {
    const auto& l = detail::list_of(t);
    return fmt::format("<TensorArray of {} {} elements>", l.items.size(), dtype_name(l.elem_dtype));
  }
  if (t.rank() == 0) return format_element(t, 0, style);
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
}  // namespace detail

std::string Tensor::str() const {
  if (!has_value()) return "Tensor(<no value>)";
  if (is_symbolic())
    return fmt::format("Tensor(\"{}:{}\", shape={}, dtype={})", detail::symbolic_name(*this), impl_->output,
                       shape().tf_str(), dtype_name(dtype()));
  const bool summarize = num_elements() > 1000;
  return fmt::format("tf.Tensor({}, shape={}, dtype={})", format_concrete(*this, Style::Repr, summarize),
                     shape().tf_str(), dtype_name(dtype()));
}

std::string TensorType::str() const {
  if (dtype == DType::List) return fmt::format("list<{}{}>", dtype_short_name(elem_dtype), shape.str());
  return fmt::format("{}{}", dtype_short_name(dtype), shape.str());
}

}  // namespace ag
