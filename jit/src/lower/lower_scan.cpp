// Cumsum and cumprod: for each outer index and each column after the axis, the axis walked in
// order (or reversed) with the running value carried in a register.
#include "emitter.h"

namespace ag::jit {
namespace {

class ScanLowering : NodeLowering {
 public:
  using NodeLowering::NodeLowering;

  void lower() {
    const TensorType& t = n_.outputs[0];
    const LVal x = e_.as_buffer(s_.at(n_.inputs[0]));
    const size_t rank = x.dims.size();
    const size_t axis = static_cast<size_t>(n_.attrs.axis < 0 ? n_.attrs.axis + static_cast<int64_t>(rank) : n_.attrs.axis);
    const bool exclusive = n_.attrs.scan_flags()[0] != 0, reverse = n_.attrs.scan_flags()[1] != 0;
    LVal out;
    out.dtype = t.dtype;
    out.dims = x.dims;
    out.ptr = e_.result_buffer(s_, i_, out.dims);
    llvm::Value* outer = e_.numel(std::vector<llvm::Value*>(x.dims.begin(), x.dims.begin() + static_cast<std::ptrdiff_t>(axis)));
    llvm::Value* inner = e_.numel(std::vector<llvm::Value*>(x.dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.dims.end()));
    llvm::Value* n = x.dims[axis];
    const bool fp = is_floating(t.dtype);
    const bool sum = n_.op == OpKind::Cumsum;
    llvm::Value* identity = e_.constant(t.dtype, sum ? 0.0 : 1.0, sum ? 0 : 1);
    e_.loop_nest({outer, inner}, [&](const std::vector<llvm::Value*>& oi) {
      e_.loop_carry(n, {identity}, [&](const std::vector<llvm::Value*>& acc, llvm::Value* k) {
        llvm::Value* row = reverse ? b_.CreateSub(b_.CreateSub(n, e_.i64(1)), k) : k;
        llvm::Value* at = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(oi[0], n), row), inner), oi[1]);
        llvm::Value* v = e_.load(t.dtype, x.ptr, at);
        llvm::Value* next = sum ? (fp ? b_.CreateFAdd(acc[0], v) : b_.CreateAdd(acc[0], v))
                                : (fp ? b_.CreateFMul(acc[0], v) : b_.CreateMul(acc[0], v));
        e_.store(t.dtype, out.ptr, at, exclusive ? acc[0] : next);
        return std::vector<llvm::Value*>{next};
      });
    });
    e_.finish_result(s_, i_, out, out.ptr);
  }
};

}  // namespace

void Emitter::lower_scan(Scope& s, uint32_t i) { ScanLowering(*this, s, i).lower(); }

}  // namespace ag::jit
