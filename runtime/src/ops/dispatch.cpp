// Running ops on concrete tensors (eval_op), static types of tensors, readability checks.
#include <fmt/format.h>

#include "ag/detail/tensor_list.h"
#include "../trace/frame.h"
#include "ag/detail/out_of_memory.h"
#include "kernels.h"

namespace ag::detail {

TensorType type_of(const Tensor& t) {
  TensorType type{t.dtype(), detail::impl_of(t)->shape, DType::Float32};  // (shape() refuses an unknown rank)
  if (t.is_symbolic()) type.rank_unknown = detail::impl_of(t)->rank_unknown;
  if (t.dtype() == DType::List) {
    if (t.is_symbolic()) {
      type.elem_dtype = detail::impl_of(t)->elem_dtype;
      type.elem_shape_varies = detail::impl_of(t)->elem_shape_varies;
    } else {
      const TensorList& l = list_of(t);
      type.elem_dtype = l.elem_dtype;
      type.rank_unknown = !list_element_type(l, type.shape);
      type.elem_shape_varies = !l.infer_shape;
    }
  }
  return type;
}

void check_readable(const Tensor& t, OpKind op, SourceLoc loc) {
  const TensorImpl* impl = detail::impl_of(t);
  if (!impl || impl->kind == ImplKind::Undefined) throw_undefined(t, user_op_name(op), loc);
}

namespace {

Tensor dispatch_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc) {
  switch (op_class(op)) {
    case OpClass::Source: return source_kernel(op, in, attrs, out, loc);
    case OpClass::Reduce:
    case OpClass::ArgReduce: return reduce_kernel(op, in, attrs, out, loc);
    case OpClass::MatMul: return matmul_kernel(in, attrs, out, loc);
    case OpClass::Scan: return scan_kernel(op, in, attrs, out, loc);
    case OpClass::Window:
    case OpClass::Index: return runtime_kernel(op, in, attrs, out, loc);
    case OpClass::Layout: return layout_kernel(op, in, attrs, out, loc);
    case OpClass::List: return list_kernel(op, in, attrs, out, loc);
    case OpClass::Stateful: return stateful_kernel(op, in, attrs, out, loc);
    case OpClass::Check: return check_numerics_kernel(in, attrs, loc);
    case OpClass::Control: throw InternalError("eval_op: If/While run in the interpreter");
    default: return elementwise_kernel(op, in, attrs, out, loc);
  }
}

// Out of memory is the user's error (TensorFlow's ResourceExhaustedError), named by the op and
// the line; a try block costs nothing until something throws.
Tensor run_kernel(OpKind op, std::span<const Tensor> in, const Attrs& attrs, const TensorType& out, SourceLoc loc) {
  try {
    return dispatch_kernel(op, in, attrs, out, loc);
  } catch (const TensorAllocationFailure& f) {
    throw out_of_memory(user_op_name(op), f.dtype, f.shape, loc);
  } catch (const std::bad_alloc&) {  // a kernel's scratch memory: name the result it was computing
    throw out_of_memory(user_op_name(op), out.dtype, out.shape, loc);
  }
}

}  // namespace

Tensor eval_op(OpKind op, std::span<const Tensor> in, const Attrs& attrs, SourceLoc loc) {
  // The input types are built in place for the usual arities: this is the eager hot path.
  switch (in.size()) {
    case 1: {
      const TensorType t[1] = {type_of(in[0])};
      return run_kernel(op, in, attrs, infer_type(op, t, attrs, loc), loc);
    }
    case 2: {
      const TensorType t[2] = {type_of(in[0]), type_of(in[1])};
      return run_kernel(op, in, attrs, infer_type(op, t, attrs, loc), loc);
    }
    case 3: {
      const TensorType t[3] = {type_of(in[0]), type_of(in[1]), type_of(in[2])};
      return run_kernel(op, in, attrs, infer_type(op, t, attrs, loc), loc);
    }
    default: {
      std::vector<TensorType> types;
      types.reserve(in.size());
      for (const Tensor& t : in) types.push_back(type_of(t));
      return run_kernel(op, in, attrs, infer_type(op, types, attrs, loc), loc);
    }
  }
}

}  // namespace ag::detail
