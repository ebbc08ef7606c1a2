// The eager/traced dispatch of every op, and the resolution of weak C++ scalar operands.
#include <fmt/format.h>

#include "../tensor/tensor_list.h"
#include "../trace/frame.h"
#include "kernels.h"

namespace ag::detail {

TensorType type_of(const Tensor& t) {
  TensorType type{t.dtype(), t.shape(), DType::Float32};
  if (t.dtype() == DType::List) {
    if (t.is_symbolic()) {
      type.elem_dtype = t.impl()->elem_dtype;
    } else {
      const TensorList& l = list_of(t);
      type.elem_dtype = l.elem_dtype;
      type.shape = l.elem_shape;
    }
  }
  return type;
}

void check_readable(const Tensor& t, OpKind op, SourceLoc loc) {
  const TensorImpl* impl = t.impl();
  if (!impl || impl->kind == ImplKind::Undefined) throw_undefined(t, user_op_name(op), loc);
  if (impl->maybe_undefined)
    throw ConversionError(fmt::format("{}{}", impl->note ? *impl->note : std::string("a loop variable may have no value"),
                                      at(loc)));
}

Tensor eval_op(OpKind op, std::span<const Tensor> in, const Attrs& attrs, SourceLoc loc) {
  TensorType types[4];
  std::vector<TensorType> many;
  std::span<const TensorType> span;
  if (in.size() <= 4) {
    for (size_t i = 0; i < in.size(); ++i) types[i] = type_of(in[i]);
    span = {types, in.size()};
  } else {
    for (const Tensor& t : in) many.push_back(type_of(t));
    span = many;
  }
  const TensorType out = infer_type(op, span, attrs, loc);
  switch (op_class(op)) {
    case OpClass::Source: return source_kernel(op, in, attrs, out, loc);
    case OpClass::Reduce:
    case OpClass::ArgReduce: return reduce_kernel(op, in, attrs, out, loc);
    case OpClass::MatMul: return matmul_kernel(in, out, loc);
    case OpClass::Layout: return layout_kernel(op, in, attrs, out, loc);
    case OpClass::List: return list_kernel(op, in, attrs, out, loc);
    case OpClass::Stateful: return stateful_kernel(op, in, attrs, out, loc);
    case OpClass::Control: throw InternalError("eval_op: If/While run in the interpreter");
    default: return elementwise_kernel(op, in, attrs, out, loc);
  }
}

Tensor apply_op(OpKind op, std::span<const Tensor> inputs, const Attrs& attrs, SourceLoc loc) {
  bool symbolic = false;
  for (const Tensor& t : inputs) {
    check_readable(t, op, loc);
    symbolic |= t.impl()->kind == ImplKind::Symbolic;
  }
  if (symbolic) return trace_op(op, inputs, attrs, loc);
  return eval_op(op, inputs, attrs, loc);
}

}  // namespace ag::detail
