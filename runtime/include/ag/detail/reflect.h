// Aggregate reflection without macros: the number of fields of a plain struct, references to
// them, and their names, in C++20 (the techniques of Boost.PFR, written here in ~100 lines
// because Debian 12's default Boost, 1.74, predates PFR, and field names need PFR 1.84).
//   struct Params { ag::Tensor w, b; };
//   field_count<Params>() == 2;  fields(p) == std::tie(p.w, p.b);  field_name<Params, 1>() == "b"
// Works for aggregates with up to 32 fields, no base classes and no C arrays.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace ag::detail::reflect {

// Converts to a reference of any type: T{any_field{}...} is well-formed exactly when T has at
// least that many fields (each initializer converts to its field, so no brace elision).
struct any_field {
  template <class T>
  constexpr operator T&() const&& noexcept;  // NOLINT: declared only, for unevaluated use
};

template <class T, size_t... I>
constexpr bool constructible_with(std::index_sequence<I...>) {
  return requires { T{(static_cast<void>(I), any_field{})...}; };
}

template <class T, size_t N = 0>
constexpr size_t count_fields() {
  if constexpr (N > 32 || !constructible_with<T>(std::make_index_sequence<N + 1>{})) return N;
  else return count_fields<T, N + 1>();
}

template <class T>
inline constexpr size_t field_count_v = count_fields<T>();

// References to t's fields, in declaration order (a std::tuple of references).
template <class T>
constexpr auto fields(T& t) noexcept {
  constexpr size_t N = field_count_v<std::remove_const_t<T>>;
  static_assert(N <= 32, "agc reflects aggregates of up to 32 fields: group fields into nested structs");
  if constexpr (N == 0) return std::tuple<>{};
  else if constexpr (N == 1) { auto& [f0] = t; return std::tie(f0); }
  else if constexpr (N == 2) { auto& [f0, f1] = t; return std::tie(f0, f1); }
  else if constexpr (N == 3) { auto& [f0, f1, f2] = t; return std::tie(f0, f1, f2); }
  else if constexpr (N == 4) { auto& [f0, f1, f2, f3] = t; return std::tie(f0, f1, f2, f3); }
  else if constexpr (N == 5) { auto& [f0, f1, f2, f3, f4] = t; return std::tie(f0, f1, f2, f3, f4); }
  else if constexpr (N == 6) { auto& [f0, f1, f2, f3, f4, f5] = t; return std::tie(f0, f1, f2, f3, f4, f5); }
  else if constexpr (N == 7) { auto& [f0, f1, f2, f3, f4, f5, f6] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6); }
  else if constexpr (N == 8) { auto& [f0, f1, f2, f3, f4, f5, f6, f7] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7); }
  else if constexpr (N == 9) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8); }
  else if constexpr (N == 10) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9); }
  else if constexpr (N == 11) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10); }
  else if constexpr (N == 12) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11); }
  else if constexpr (N == 13) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12); }
  else if constexpr (N == 14) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13); }
  else if constexpr (N == 15) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14); }
  else if constexpr (N == 16) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15); }
  else if constexpr (N == 17) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16); }
  else if constexpr (N == 18) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17); }
  else if constexpr (N == 19) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18); }
  else if constexpr (N == 20) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19); }
  else if constexpr (N == 21) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20); }
  else if constexpr (N == 22) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21); }
  else if constexpr (N == 23) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22); }
  else if constexpr (N == 24) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23); }
  else if constexpr (N == 25) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24); }
  else if constexpr (N == 26) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25); }
  else if constexpr (N == 27) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26); }
  else if constexpr (N == 28) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27); }
  else if constexpr (N == 29) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28); }
  else if constexpr (N == 30) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29); }
  else if constexpr (N == 31) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30); }
  else if constexpr (N == 32) { auto& [f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31] = t; return std::tie(f0, f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14, f15, f16, f17, f18, f19, f20, f21, f22, f23, f24, f25, f26, f27, f28, f29, f30, f31); }
  }

template <class T>
using field_types = decltype(fields(std::declval<T&>()));
// The type of field I of T (without reference).
template <class T, size_t I>
using field_type = std::remove_cvref_t<std::tuple_element_t<I, field_types<T>>>;

// ---- field names, from the compiler's name of a template parameter that is a field's address ----
template <class T>
struct fake_wrapper {
  const T value;
};
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wundefined-var-template"
#pragma clang diagnostic ignored "-Wundefined-internal"
#endif
// Declared, never defined: only the addresses of its fields are used, at compile time.
template <class T>
extern const fake_wrapper<T> fake_object;

template <auto Ptr>
constexpr std::string_view pretty_name() noexcept {
  return __PRETTY_FUNCTION__;
}
template <class T, size_t I>
constexpr std::string_view raw_field_name() noexcept {
  return pretty_name<&std::get<I>(fields(fake_object<T>.value))>();
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

// The field's name in "...[Ptr = &fake_object<P>.value.w1]" (Clang) or
// "...[with auto Ptr = (& ...fake_object<P>.ag::...::value.P::w1); ...]" (GCC): the identifier
// ending the template argument.
constexpr std::string_view name_in(std::string_view pretty) noexcept {
  size_t begin = pretty.find("Ptr = ");
  if (begin == std::string_view::npos) return {};
  std::string_view arg = pretty.substr(begin + 6);
  arg = arg.substr(0, arg.find_first_of(";]"));
  while (!arg.empty() && (arg.back() == ')' || arg.back() == ' ')) arg.remove_suffix(1);
  const size_t cut = arg.find_last_of(".:");
  return cut == std::string_view::npos ? std::string_view{} : arg.substr(cut + 1);
}

template <class T, size_t I>
inline constexpr auto field_name_storage = [] {
  constexpr std::string_view name = name_in(raw_field_name<T, I>());
  std::array<char, name.size() + 1> out{};
  for (size_t k = 0; k < name.size(); ++k) out[k] = name[k];
  return out;
}();

// The name of field I of T as declared ("w1"); empty where the compiler's text has no name.
template <class T, size_t I>
constexpr std::string_view field_name() noexcept {
  return {field_name_storage<T, I>.data(), field_name_storage<T, I>.size() - 1};
}

}  // namespace ag::detail::reflect
