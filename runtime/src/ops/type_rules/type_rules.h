// The type rules, one function per TypeRule of ops.def, in one file per op family; shared
// checks for them. infer_type (../type_rules.cpp) checks the arity from the table and calls
// the op's rule.
#pragma once

#include <fmt/format.h>

#include <span>
#include <string>

#include "ag/detail/ops_internal.h"

namespace ag::detail {

#define AG_OP(Name, UserName, Kernel, TypeRule, Arity, Stateful, Raises, Cost, Vector, Gradient, Api, ApiName, Equivalent) \
  TensorType type_rule_##TypeRule(OpKind op, std::span<const TensorType> in, const Attrs& attrs, SourceLoc loc);
#include "ag/graph/ops.def"

[[noreturn]] void type_error(OpKind op, SourceLoc loc, const std::string& msg);
[[noreturn]] void value_error(OpKind op, SourceLoc loc, const std::string& msg);
// "float32[2,3]"
std::string describe(const TensorType& t);
void require_numeric(OpKind op, const TensorType& t, const char* which, SourceLoc loc);
// Indices (gather's, a TensorArray's) are int32 or int64, as in TensorFlow.
inline bool is_index_dtype(DType d) { return d == DType::Int32 || d == DType::Int64; }
void require_same_dtype(OpKind op, const TensorType& a, const TensorType& b, SourceLoc loc);

}  // namespace ag::detail
