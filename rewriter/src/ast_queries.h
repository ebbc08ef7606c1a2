// Questions every converter asks of Clang's AST: is this value a tensor, is this function marked.
#pragma once

#include <clang/AST/AST.h>

namespace ag::rewriter {

// ag::Tensor (cv-qualifiers and references stripped).
bool isTensorType(clang::QualType type);
// ag::TensorArray: carried like a tensor.
bool isTensorArrayType(clang::QualType type);
// ag::Variable: captured by reference by the graph, never carried as state.
bool isVariableType(clang::QualType type);
// std::array<ag::Tensor or ag::TensorArray, N> or std::vector<ag::Tensor>: the runtime carries
// each element (AutoGraph's composite names arr[0], arr[1], ...).
bool isTensorContainerType(clang::QualType type);
// A struct whose fields the rewriter can carry one by one: an aggregate with only public
// fields, each a tensor, a TensorArray, a tensor container, or such a struct.
const clang::CXXRecordDecl* tensorStruct(clang::QualType type);
// What a staged construct can carry: any of the above (type-dependent types are decided when
// the template is instantiated, by the runtime).
bool isCarriableType(clang::QualType type);

// Strips what the compiler added around an expression (implicit `explicit operator bool`
// calls, temporaries, casts) and the parentheses the user wrote.
const clang::Expr* stripImplicit(const clang::Expr* e);

// A value whose static type makes the construct it controls staged: ag::Tensor, or
// type-dependent inside a template (the runtime operator decides at instantiation).
bool isTensorValued(const clang::Expr* e);
// A condition that must be converted: tensor-valued, or a logical expression (&&, ||, !, ?:)
// with a tensor-valued operand.
bool isTensorCondition(const clang::Expr* e);

// A function marked AG_FUNCTION ([[clang::annotate("ag_function")]]) on any of its declarations.
bool isMarkedFunction(const clang::FunctionDecl* fd);  // and not AG_DO_NOT_CONVERT
// Marked AG_DO_NOT_CONVERT ([[clang::annotate("ag_do_not_convert")]]): never converted, and
// calls of it draw no unmarked-callee warning.
bool isDoNotConvert(const clang::FunctionDecl* fd);

}  // namespace ag::rewriter

namespace ag::rewriter {
// Whether `s` has control flow on tensors: an if/loop/switch whose condition or iterable is a
// tensor, or a logical or conditional expression on tensors.
bool hasTensorControlFlow(const clang::Stmt* s);
}  // namespace ag::rewriter
