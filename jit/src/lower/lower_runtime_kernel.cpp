// The Window and Index families (conv2d, pooling, argsort, scatters, ...): a call of the
// runtime's kernel (ag/detail/runtime_kernels.h; oneDNN for float32 convolutions) on the node's
// buffers. A result whose shape is known only at run time asks the runtime for it first,
// which checks the inputs against each other as eager code does.
#include "emitter.h"

namespace ag::jit {
namespace {

class RuntimeKernelLowering : NodeLowering {
 public:
  using NodeLowering::NodeLowering;

  void lower() {
    const TensorType& t = n_.outputs[0];
    const int32_t id = s_.node_id(i_);
    llvm::Value* args = input_args();
    auto check = [&](llvm::Value* rc) { e_.return_if(b_.CreateICmpNE(rc, e_.i32(0))); };
    LVal out;
    out.dtype = t.dtype;
    if (t.shape.is_fully_defined()) {
      out.dims = e_.static_dims(t.shape);
    } else {
      llvm::Value* dims = e_.stack_alloc(std::max<int64_t>(t.shape.rank(), 1) * 8);
      check(b_.CreateCall(e_.runtime("agc_rt_kernel_dims"), {e_.ctx(), e_.i32(id), args, dims}));
      out.dims = e_.described_dims(t, dims);
    }
    llvm::Value* ptr = e_.result_buffer(s_, i_, out.dims);
    check(b_.CreateCall(e_.runtime("agc_rt_kernel"), {e_.ctx(), e_.i32(id), args, ptr}));
    e_.finish_result(s_, i_, out, ptr);
  }
};

}  // namespace

void Emitter::lower_runtime_kernel(Scope& s, uint32_t i) { RuntimeKernelLowering(*this, s, i).lower(); }

}  // namespace ag::jit
