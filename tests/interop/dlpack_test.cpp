// ag::to_dlpack / ag::from_dlpack against a producer and a consumer written to the DLPack header.
#include <ag/dlpack.h>

#include <cstring>
#include <thread>

#include "interop_test_util.h"

namespace {

using ag::Tensor;
using agtest::Mode;

// A foreign framework's tensor: its own buffer, shape and strides, and a deleter that counts.
struct Foreign {
  DLManagedTensor managed{};
  std::vector<unsigned char> bytes;
  std::vector<int64_t> shape, strides;
  int* deleted;
};

void foreign_deleter(DLManagedTensor* self) {
  auto* f = static_cast<Foreign*>(self->manager_ctx);
  ++*f->deleted;
  delete f;
}

// `n` bytes of buffer, filled by the caller through data(); strides empty = null (compact).
DLManagedTensor* make_foreign(int* deleted, DLDataType dtype, std::vector<int64_t> shape,
                              std::vector<int64_t> strides = {}, size_t bytes = 1024, DLDevice device = {kDLCPU, 0}) {
  auto* f = new Foreign;
  f->bytes.assign(bytes, 0);
  f->shape = std::move(shape);
  f->strides = std::move(strides);
  f->deleted = deleted;
  DLTensor& t = f->managed.dl_tensor;
  t.data = f->bytes.data();
  t.device = device;
  t.ndim = static_cast<int>(f->shape.size());
  t.dtype = dtype;
  t.shape = f->shape.data();
  t.strides = f->strides.empty() ? nullptr : f->strides.data();
  f->managed.manager_ctx = f;
  f->managed.deleter = foreign_deleter;
  return &f->managed;
}

constexpr DLDataType kF32{kDLFloat, 32, 1};

TEST(DLPack, FromDlpackViewsTheDataAndCallsTheDeleterOnceWithTheLastTensor) {
  int deleted = 0;
  DLManagedTensor* m = make_foreign(&deleted, kF32, {2, 3});
  auto* p = static_cast<float*>(m->dl_tensor.data);
  for (int i = 0; i < 6; ++i) p[i] = static_cast<float>(i);
  Tensor t = ag::from_dlpack(m);
  EXPECT_EQ(t.data<float>(), p);
  EXPECT_EQ(t.shape(), ag::Shape({2, 3}));
  EXPECT_EQ(t.dtype(), ag::float32);
  Tensor row = t[1];
  Tensor flat = ag::reshape(t, {6});
  t = Tensor();
  flat = Tensor();
  EXPECT_EQ(deleted, 0);
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{3, 4, 5}));
  std::thread([r = std::move(row)]() mutable { r = Tensor(); }).join();  // any thread may drop it
  EXPECT_EQ(deleted, 1);
}

TEST(DLPack, EachAgcDtypeMapsAndOthersAreTypeErrors) {
  struct Case {
    DLDataType dl;
    ag::DType dtype;
  };
  for (Case c : {Case{{ag::kDLPackBoolCode, 8, 1}, ag::bool_}, Case{{kDLInt, 32, 1}, ag::int32},
                 Case{{kDLInt, 64, 1}, ag::int64}, Case{{kDLFloat, 32, 1}, ag::float32},
                 Case{{kDLFloat, 64, 1}, ag::float64}, Case{{kDLUInt, 8, 1}, ag::uint8}, Case{{kDLInt, 8, 1}, ag::int8},
                 Case{{kDLFloat, 16, 1}, ag::float16}, Case{{kDLBfloat, 16, 1}, ag::bfloat16}}) {
    int deleted = 0;
    {
      Tensor t = ag::from_dlpack(make_foreign(&deleted, c.dl, {4}));
      EXPECT_EQ(t.dtype(), c.dtype);
      EXPECT_EQ(ag::reduce_sum(ag::cast(t, ag::int32)).item<int32_t>(), 0);
    }
    EXPECT_EQ(deleted, 1);
  }
  struct Bad {
    DLDataType dl;
    const char* name;
  };
  for (Bad b : {Bad{{kDLUInt, 16, 1}, "uint16"}, Bad{{kDLFloat, 8, 1}, "float8"}, Bad{{kDLBfloat, 32, 1}, "bfloat32"},
                Bad{{kDLComplex, 64, 1}, "complex64"}, Bad{{kDLInt, 16, 1}, "int16"},
                Bad{{kDLFloat, 32, 4}, "float32 x 4 lanes"}, Bad{{ag::kDLPackBoolCode, 1, 1}, "bool1"}}) {
    int deleted = 0;
    DLManagedTensor* m = make_foreign(&deleted, b.dl, {4});
    AG_EXPECT_ERROR(ag::TypeError, ag::from_dlpack(m), "ag::from_dlpack", b.name, "has no agc dtype");
    EXPECT_EQ(deleted, 0);  // on error the tensor stays the caller's
    m->deleter(m);
  }
}

TEST(DLPack, OnlyCpuMemoryIsAccepted) {
  int deleted = 0;
  DLManagedTensor* m = make_foreign(&deleted, kF32, {4}, {}, 1024, {kDLCUDA, 1});
  AG_EXPECT_ERROR(ag::ValueError, ag::from_dlpack(m), "ag::from_dlpack", "kDLCUDA (device 1)", "kDLCPU");
  EXPECT_EQ(deleted, 0);
  m->deleter(m);
}

TEST(DLPack, CompactRowMajorStridesAreAcceptedOthersRejected) {
  int deleted = 0;
  // Given compact strides, and any stride on a dim of size 1.
  Tensor a = ag::from_dlpack(make_foreign(&deleted, kF32, {2, 3}, {3, 1}));
  Tensor b = ag::from_dlpack(make_foreign(&deleted, kF32, {2, 1, 3}, {3, 99, 1}));
  Tensor e = ag::from_dlpack(make_foreign(&deleted, kF32, {0, 3}, {7, 7}));
  EXPECT_EQ(b.shape(), ag::Shape({2, 1, 3}));
  a = b = e = Tensor();
  EXPECT_EQ(deleted, 3);
  // A transposed (column-major) layout would need a copy: rejected, the tensor stays the caller's.
  DLManagedTensor* m = make_foreign(&deleted, kF32, {2, 3}, {1, 2});
  AG_EXPECT_ERROR(ag::ValueError, ag::from_dlpack(m), "ag::from_dlpack", "strides [1, 2]", "shape [2,3]",
                  "not compact row-major ([3, 1])", "contiguous");
  m->deleter(m);
  m = make_foreign(&deleted, kF32, {4}, {2});
  AG_EXPECT_ERROR(ag::ValueError, ag::from_dlpack(m), "strides [2]");
  m->deleter(m);
  EXPECT_EQ(deleted, 5);
}

TEST(DLPack, ByteOffsetShapeAndPointerChecks) {
  int deleted = 0;
  DLManagedTensor* m = make_foreign(&deleted, {kDLInt, 32, 1}, {2});
  static_cast<int32_t*>(m->dl_tensor.data)[3] = 7;
  m->dl_tensor.byte_offset = 12;
  Tensor t = ag::from_dlpack(m);
  EXPECT_EQ(t.to_vector<int32_t>(), (std::vector<int32_t>{7, 0}));
  t = Tensor();
  m = make_foreign(&deleted, kF32, {2});
  m->dl_tensor.byte_offset = 2;
  AG_EXPECT_ERROR(ag::ValueError, ag::from_dlpack(m), "ag::from_dlpack", "not aligned to the 4-byte elements");
  m->deleter(m);
  m = make_foreign(&deleted, kF32, {1, 1, 1, 1, 1, 1, 1, 1, 1});
  AG_EXPECT_ERROR(ag::ValueError, ag::from_dlpack(m), "9 dims", "0 to 8");
  m->deleter(m);
  m = make_foreign(&deleted, kF32, {-2});
  AG_EXPECT_ERROR(ag::ValueError, ag::from_dlpack(m), "negative dim");
  m->deleter(m);
  EXPECT_EQ(deleted, 4);
  AG_EXPECT_ERROR(ag::ValueError, ag::from_dlpack(nullptr), "ag::from_dlpack", "null");
}

// A consumer written to the header: it reads what DLPack promises and calls the deleter once.
TEST(DLPack, ToDlpackDescribesTheTensorAndKeepsItAlive) {
  std::vector<double> buf{1, 2, 3, 4, 5, 6};
  agtest::ReleaseCounter released;
  Tensor t = ag::from_external(buf.data(), ag::float64, {3, 2}, agtest::ReleaseCounter::hook, &released);
  DLManagedTensor* m = ag::to_dlpack(t);
  t = Tensor();
  EXPECT_EQ(released.calls.load(), 0);  // the DLManagedTensor holds it
  const DLTensor& d = m->dl_tensor;
  EXPECT_EQ(d.device.device_type, kDLCPU);
  EXPECT_EQ(d.device.device_id, 0);
  EXPECT_EQ(d.ndim, 2);
  EXPECT_EQ(d.dtype.code, kDLFloat);
  EXPECT_EQ(d.dtype.bits, 64);
  EXPECT_EQ(d.dtype.lanes, 1);
  EXPECT_EQ(d.shape[0], 3);
  EXPECT_EQ(d.shape[1], 2);
  ASSERT_NE(d.strides, nullptr);
  EXPECT_EQ(d.strides[0], 2);
  EXPECT_EQ(d.strides[1], 1);
  EXPECT_EQ(d.byte_offset, 0u);
  EXPECT_EQ(d.data, buf.data());
  EXPECT_EQ(static_cast<const double*>(d.data)[5], 6.0);
  m->deleter(m);
  EXPECT_EQ(released.calls.load(), 1);

  Tensor flags = ag::constant({true, false});
  DLManagedTensor* b = ag::to_dlpack(flags);
  EXPECT_EQ(b->dl_tensor.dtype.code, ag::kDLPackBoolCode);
  EXPECT_EQ(b->dl_tensor.dtype.bits, 8);
  b->deleter(b);
  DLManagedTensor* s = ag::to_dlpack(Tensor(int64_t{5}));
  EXPECT_EQ(s->dl_tensor.ndim, 0);
  EXPECT_EQ(*static_cast<const int64_t*>(s->dl_tensor.data), 5);
  s->deleter(s);
}

TEST(DLPack, ToDlpackOfTensorsWithoutDataIsAnError) {
  AG_EXPECT_ERROR(ag::ValueError, ag::to_dlpack(Tensor()), "ag::to_dlpack", "no value");
  auto f = ag::function([](Tensor x) {
    DLManagedTensor* m = ag::to_dlpack(x);
    m->deleter(m);
    return x;
  });
  AG_EXPECT_ERROR(ag::ConversionError, f(ag::constant({1.f})), "ag::to_dlpack", "symbolic");
}

// agc -> DLPack -> agc: the same buffer, through a Function in every mode; the original's
// memory is released once, after the last tensor of the round trip dies.
TEST(DLPack, RoundTripIsZeroCopyAndWorksInFunctions) {
  std::vector<float> buf(12);
  for (int i = 0; i < 12; ++i) buf[i] = static_cast<float>(i) / 2;
  agtest::ReleaseCounter released;
  {
    Tensor back = ag::from_dlpack(
        ag::to_dlpack(ag::from_external(buf.data(), ag::float32, {3, 4}, agtest::ReleaseCounter::hook, &released)));
    EXPECT_EQ(back.data<float>(), buf.data());
    for (Mode mode : agtest::modes()) {
      SCOPED_TRACE(agtest::mode_name(mode));
      auto fn = [](Tensor x) { return ag::reduce_sum(x * 2, 0); };
      Tensor out = mode == Mode::Eager ? fn(back) : ag::function(fn, agtest::options_for(mode))(back);
      EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{12, 15, 18, 21}));
    }
    EXPECT_EQ(released.calls.load(), 0);
  }
  EXPECT_EQ(released.calls.load(), 1);
}

}  // namespace
