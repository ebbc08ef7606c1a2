// ag::print: a staged print that runs on every call of a compiled function (tf.print), the
// print/log sinks, and fmt formatters for Tensor, DType and Shape.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "ag/tensor.h"

namespace ag {

namespace detail {
struct PrintArg {
  bool is_tensor = false;
  std::string text;
  Tensor tensor;
};
inline PrintArg to_print_arg(const Tensor& t) { return {true, {}, t}; }
inline PrintArg to_print_arg(std::string_view s) { return {false, std::string(s), {}}; }
inline PrintArg to_print_arg(const char* s) { return {false, s, {}}; }
inline PrintArg to_print_arg(const std::string& s) { return {false, s, {}}; }
template <Arithmetic T>
PrintArg to_print_arg(T v) {
  return {true, {}, Tensor(v)};
}
void print_impl(std::vector<PrintArg> args);
// The tf.print text of a tensor's values: [1 2 3], [[1 2] [3 4]], a scalar as 5; dims longer
// than 6 elided to their first and last 3 elements with "...".
std::string format_values(const Tensor& t);
// The same text with every element, none elided (graph text that is read back: parser.h).
std::string format_all_values(const Tensor& t);
}  // namespace detail

// Prints its arguments separated by one space, ending with a newline. While tracing, the print
// is staged into the graph and runs on every call.
template <class... Args>
void print(const Args&... args) {
  std::vector<detail::PrintArg> v;
  v.reserve(sizeof...(Args));
  (v.push_back(detail::to_print_arg(args)), ...);
  detail::print_impl(std::move(v));
}

// Receives exactly one call per ag::print with the whole line (newline included); nullptr
// restores stdout.
void set_print_sink(std::function<void(std::string_view)> sink);
// Receives warnings and AG_LOG lines (default: stderr); nullptr restores stderr.
void set_log_sink(std::function<void(std::string_view)> sink);

}  // namespace ag

template <>
struct fmt::formatter<ag::DType> : fmt::formatter<std::string_view> {
  auto format(ag::DType d, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(ag::dtype_name(d), ctx);
  }
};
template <>
struct fmt::formatter<ag::Shape> : fmt::formatter<std::string_view> {
  auto format(const ag::Shape& s, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(s.tf_str(), ctx);
  }
};
template <>
struct fmt::formatter<ag::Tensor> : fmt::formatter<std::string_view> {
  auto format(const ag::Tensor& t, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(t.str(), ctx);
  }
};
