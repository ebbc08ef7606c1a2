// The message of ResourceExhaustedError: the op, the tensor's dtype and shape, the bytes it
// needs (exact, and readable) and the user's line.
#include "ag/detail/out_of_memory.h"

#include <fmt/format.h>

#include <iterator>

#include "ag/detail/ops_internal.h"

namespace ag::detail {
namespace {

// "4.0 TiB"
std::string readable_bytes(long double bytes) {
  static constexpr const char* kUnits[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  size_t unit = 0;
  while (bytes >= 1024 && unit + 1 < std::size(kUnits)) bytes /= 1024, ++unit;
  return unit == 0 ? fmt::format("{} bytes", static_cast<int64_t>(bytes))
                   : fmt::format("{:.1f} {}", static_cast<double>(bytes), kUnits[unit]);
}

// "4398046511104 bytes, 4.0 TiB"; sizes that do not fit 64 bits (a shape whose element count
// overflows) are given approximately.
std::string byte_count(DType dtype, const Shape& shape) {
  if (!shape.is_fully_defined()) return "its size is known only at run time";
  uint64_t exact = dtype_size(dtype);
  long double approx = static_cast<long double>(exact);
  bool overflow = false;
  for (int64_t d : shape) {
    overflow |= __builtin_mul_overflow(exact, static_cast<uint64_t>(d < 0 ? 0 : d), &exact);
    approx *= static_cast<long double>(d);
  }
  if (overflow) return fmt::format("about {:.3g} bytes, more than 64-bit sizes can count", static_cast<double>(approx));
  if (exact < 1024) return fmt::format("{} bytes", exact);
  return fmt::format("{} bytes, {}", exact, readable_bytes(approx));
}

}  // namespace

ResourceExhaustedError out_of_memory(const char* op, DType dtype, const Shape& shape, SourceLoc loc,
                                     int64_t block_bytes) {
  const std::string block =
      block_bytes > 0 ? fmt::format(", in one block of {} bytes ({}) that compiled code allocates for the function's "
                                    "intermediate values",
                                    block_bytes, readable_bytes(static_cast<long double>(block_bytes)))
                      : std::string();
  const std::string_view name = dtype_name(dtype);
  const char* article = name.starts_with("int") ? "an" : "a";
  return ResourceExhaustedError(fmt::format("{}: out of memory allocating {} {} tensor of shape {} ({}){}{}", op, article,
                                            name, shape.str(), byte_count(dtype, shape), block, at(loc)));
}

Tensor make_tensor_for(const char* op, DType dtype, const Shape& shape, SourceLoc loc) {
  try {
    return make_tensor(dtype, shape);
  } catch (const TensorAllocationFailure& f) {
    throw out_of_memory(op, f.dtype, f.shape, loc);
  }
}

}  // namespace ag::detail
