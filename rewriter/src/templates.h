// The named templates that every piece of generated code is formatted from (fmt syntax:
// `{name}` is filled in, `{{` / `}}` are literal braces). One place to read what ag-rewrite emits;
// docs/operators.md is the contract these follow.
#pragma once

namespace ag::rewriter::tmpl {

inline constexpr const char* kSourceLoc = "AG_SOURCE_LOC({file}, {line})";
inline constexpr const char* kLineDirective = "#line {line}";
inline constexpr const char* kFileLineDirective = "#line {line} {file}";

// Expressions (logical_expressions.cpp, conditional_expressions.cpp).
inline constexpr const char* kAnd = "ag::and_({lhs}, [&] {{ return {rhs}; }}, {loc})";
inline constexpr const char* kOr = "ag::or_({lhs}, [&] {{ return {rhs}; }}, {loc})";
inline constexpr const char* kNot = "ag::not_({operand}, {loc})";
inline constexpr const char* kIfExp = "ag::if_exp({cond}, [&] {{ return {then}; }}, [&] {{ return {else}; }}, {loc})";

// Statements: the first line, each argument line, the closing line.
inline constexpr const char* kIfHead = "ag::if_stmt({cond},";
inline constexpr const char* kWhileHead = "ag::while_stmt(";
inline constexpr const char* kDoWhileHead = "ag::do_while_stmt(";
inline constexpr const char* kForHead = "ag::for_stmt({iterable}, {extra_test},";
inline constexpr const char* kCondLambda = "[&] {{ return {cond}; }},";
inline constexpr const char* kLambdaOpen = "[&] {{";
inline constexpr const char* kParamLambdaOpen = "[&]({param}) {{";
inline constexpr const char* kLambdaClose = "}},";
inline constexpr const char* kEmptyLambda = "[&] {{}},";
inline constexpr const char* kStateTail = "ag::state({vars}), {{{names}}}, {loc});";
inline constexpr const char* kNoExtraTest = "ag::no_extra_test";
inline constexpr const char* kExtraTest = "[&] {{ return {test}; }}";

// Lowered break / continue / return.
inline constexpr const char* kFlagDecl = "ag::Tensor {flag} = false;";
inline constexpr const char* kFlagSet = "{flag} = true;";
inline constexpr const char* kNotFlag = "ag::not_({flags})";
inline constexpr const char* kStagedLoopCond = "ag::and_({not_flags}, [&] {{ return {cond}; }}, {loc})";
inline constexpr const char* kPlainLoopCond = "ag::loop_flag({not_flags}, {loc}) && ({cond})";
inline constexpr const char* kPlainLoopIncrement = "(ag::loop_flag({not_flags}, {loc}) ? void({inc}) : void())";
inline constexpr const char* kPlainRangeForCheck = "if (!ag::loop_flag({not_flags}, {loc})) break;";
inline constexpr const char* kRetvalDecl = "{type} {name}{init};";
inline constexpr const char* kRetvalSet = "{name} = {value};";
inline constexpr const char* kTupleRetvalSet = "std::tie({names}) = {type}{value};";
inline constexpr const char* kReturn = "return {value};";
inline constexpr const char* kTupleReturn = "return {type}{{{names}}};";

// Registration of a converted function's name and parameter names.
inline constexpr const char* kRegister =
    " static const bool {var} = ::ag::detail::register_function_info(reinterpret_cast<const void*>(static_cast<{type}>(&{fn})), {name}, {{{params}}});";

}  // namespace ag::rewriter::tmpl
