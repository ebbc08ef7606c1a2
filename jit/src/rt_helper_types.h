// The value types of rt_helpers.def's signatures, and the compile-time check that a helper's C
// declaration (abi.h) or a bound kernel has the signature its row gives the IR. No LLVM.
#pragma once

#include <cstdint>
#include <type_traits>

#include "abi.h"

namespace ag::jit {

enum class RtType : uint8_t { Void, I32, I64, Ptr, Ctx, Args };

// `(A, B, C)` -> `A, B, C`: a row's parenthesized parameter list as a list.
#define AG_RT_UNPAREN(...) __VA_ARGS__

template <RtType R, class T>
inline constexpr bool rt_type_fits = false;
template <class T>
inline constexpr bool rt_type_fits<RtType::Void, T> = std::is_void_v<T>;
template <class T>
inline constexpr bool rt_type_fits<RtType::I32, T> = std::is_same_v<T, int32_t>;
template <class T>
inline constexpr bool rt_type_fits<RtType::I64, T> = std::is_same_v<T, int64_t>;
template <class T>
inline constexpr bool rt_type_fits<RtType::Ptr, T> = std::is_pointer_v<T>;
template <class T>
inline constexpr bool rt_type_fits<RtType::Ctx, T> = std::is_same_v<T, JitCallCtx*>;
template <class T>
inline constexpr bool rt_type_fits<RtType::Args, T> = std::is_same_v<T, const JitArg*>;

template <RtType Result, RtType... Params, class R, class... Ps>
constexpr bool rt_signature_fits(R (*)(Ps...)) {
  if constexpr (sizeof...(Params) != sizeof...(Ps)) return false;
  else return rt_type_fits<Result, R> && (rt_type_fits<Params, Ps> && ...);
}

}  // namespace ag::jit
