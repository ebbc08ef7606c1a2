// ag::to_dlpack / ag::from_dlpack: DLPack's DLManagedTensor over agc buffers and agc tensors over DLPack's.
#include "ag/dlpack.h"

#include <fmt/format.h>

#include <iterator>
#include <string>
#include <vector>

namespace ag {

namespace {

// What to_dlpack hands out: the DLManagedTensor, the reference that keeps the buffer alive,
// and the shape and strides it points to, in one allocation the deleter frees.
struct Export {
  DLManagedTensor managed{};
  Tensor tensor;
  int64_t shape[Shape::kMaxRank] = {};
  int64_t strides[Shape::kMaxRank] = {};
};

void delete_export(DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); }

// The release hook of a tensor made by from_dlpack: the producer's deleter, once.
void call_deleter(void* context) {
  auto* m = static_cast<DLManagedTensor*>(context);
  if (m->deleter) m->deleter(m);
}

DLDataType dl_dtype(DType d) {
  switch (d) {
    case DType::Bool: return {kDLPackBoolCode, 8, 1};
    case DType::Int32: return {kDLInt, 32, 1};
    case DType::Int64: return {kDLInt, 64, 1};
    case DType::Float32: return {kDLFloat, 32, 1};
    case DType::Float64: return {kDLFloat, 64, 1};
    case DType::UInt8: return {kDLUInt, 8, 1};
    case DType::Int8: return {kDLInt, 8, 1};
    case DType::Float16: return {kDLFloat, 16, 1};
    case DType::BFloat16: return {kDLBfloat, 16, 1};
    case DType::List: break;
  }
  throw InternalError("to_dlpack: no DLPack type for a TensorArray handle");
}

// "uint8", "float16", "bfloat16", "complex64", "float32x4": NumPy-like names for messages.
std::string dl_dtype_name(DLDataType t) {
  static constexpr const char* kCode[] = {"int", "uint", "float", "opaque handle ", "bfloat", "complex", "bool"};
  std::string name = t.code < std::size(kCode) ? std::string(kCode[t.code]) + std::to_string(t.bits)
                                               : fmt::format("type code {} with {} bits", t.code, t.bits);
  if (t.lanes != 1) name += fmt::format(" x {} lanes", t.lanes);
  return name;
}

DType agc_dtype(DLDataType t) {
  if (t.lanes == 1) {
    if (t.code == kDLInt && t.bits == 32) return DType::Int32;
    if (t.code == kDLInt && t.bits == 64) return DType::Int64;
    if (t.code == kDLFloat && t.bits == 32) return DType::Float32;
    if (t.code == kDLFloat && t.bits == 64) return DType::Float64;
    if (t.code == kDLPackBoolCode && t.bits == 8) return DType::Bool;
    if (t.code == kDLUInt && t.bits == 8) return DType::UInt8;
    if (t.code == kDLInt && t.bits == 8) return DType::Int8;
    if (t.code == kDLFloat && t.bits == 16) return DType::Float16;
    if (t.code == kDLBfloat && t.bits == 16) return DType::BFloat16;
  }
  throw TypeError(fmt::format("ag::from_dlpack: the dtype {} has no agc dtype (agc has bool, uint8, int8, int32, "
                              "int64, float16, bfloat16, float32 and float64, one lane); convert the array first "
                              "(NumPy: .astype(np.int32))",
                              dl_dtype_name(t)));
}

std::string device_name(DLDevice d) {
  switch (static_cast<int>(d.device_type)) {
    case 1: return "kDLCPU";
    case 2: return "kDLCUDA";
    case 3: return "kDLCUDAHost";
    case 4: return "kDLOpenCL";
    case 7: return "kDLVulkan";
    case 8: return "kDLMetal";
    case 9: return "kDLVPI";
    case 10: return "kDLROCM";
    case 11: return "kDLROCMHost";
    case 12: return "kDLExtDev";
    case 13: return "kDLCUDAManaged";
    case 14: return "kDLOneAPI";
    default: return "device type " + std::to_string(static_cast<int>(d.device_type));
  }
}

std::string dims_text(const int64_t* v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Null strides are compact row-major (DLPack before 1.0); given strides must be, except that a
// dim of size 1 may have any stride (it is never stepped), and an empty tensor any at all.
void check_strides(const DLTensor& t, const Shape& shape) {
  if (!t.strides || shape.num_elements() == 0) return;
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (shape[d] != 1 && t.strides[d] != expected) {
      std::vector<int64_t> compact(static_cast<size_t>(t.ndim));
      for (int64_t e = 1, k = t.ndim - 1; k >= 0; --k) compact[k] = e, e *= shape[k];
      throw ValueError(fmt::format(
          "ag::from_dlpack: the strides {} (in elements) of a tensor of shape {} are not compact row-major ({}): agc "
          "tensors are dense row-major and this view would need a copy; make the array contiguous first (NumPy: "
          "np.ascontiguousarray, PyTorch: .contiguous())",
          dims_text(t.strides, t.ndim), shape.str(), dims_text(compact.data(), t.ndim)));
    }
    expected *= shape[d];
  }
}

}  // namespace

DLManagedTensor* to_dlpack(const Tensor& t) {
  const void* data = detail::exported_data(t, "ag::to_dlpack");
  auto* e = new Export;
  e->tensor = t;
  const Shape& shape = t.shape();
  for (int64_t d = shape.rank() - 1, stride = 1; d >= 0; --d) {
    e->shape[d] = shape[d];
    e->strides[d] = stride;
    stride *= shape[d];
  }
  DLTensor& dl = e->managed.dl_tensor;
  dl.data = const_cast<void*>(data);  // the consumer must not write (see the header)
  dl.device = {kDLCPU, 0};
  dl.ndim = static_cast<int>(shape.rank());
  dl.dtype = dl_dtype(t.dtype());
  dl.shape = e->shape;
  dl.strides = e->strides;
  dl.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = delete_export;
  return &e->managed;
}

Tensor from_dlpack(DLManagedTensor* m) {
  if (!m) throw ValueError("ag::from_dlpack: the DLManagedTensor pointer is null");
  const DLTensor& t = m->dl_tensor;
  if (t.device.device_type != kDLCPU)
    throw ValueError(fmt::format("ag::from_dlpack: the tensor is on {} (device {}); agc tensors live in CPU memory "
                                 "(kDLCPU): copy it to the CPU first (PyTorch: .cpu())",
                                 device_name(t.device), t.device.device_id));
  const DType dtype = agc_dtype(t.dtype);
  if (t.ndim < 0 || t.ndim > Shape::kMaxRank)
    throw ValueError(fmt::format("ag::from_dlpack: the tensor has {} dims; agc tensors have 0 to {}", t.ndim,
                                 Shape::kMaxRank));
  if (t.ndim > 0 && !t.shape) throw ValueError(fmt::format("ag::from_dlpack: the tensor has {} dims but no shape", t.ndim));
  Shape shape(std::span<const int64_t>(t.shape, static_cast<size_t>(t.ndim)));
  for (int64_t d : shape)
    if (d < 0) throw ValueError(fmt::format("ag::from_dlpack: the shape {} has a negative dim", shape.str()));
  check_strides(t, shape);
  const void* data = t.data ? static_cast<const char*>(t.data) + t.byte_offset : nullptr;
  return detail::make_external(data, dtype, shape, call_deleter, m, "ag::from_dlpack");
}

}  // namespace ag
