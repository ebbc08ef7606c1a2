// The reference-counted representation behind ag::Tensor. Internal: runtime and JIT only.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "ag/dtype.h"
#include "ag/error.h"
#include "ag/shape.h"

namespace ag::detail {

// True when the caller holds the only reference: it may destroy the object without the atomic
// decrement, and most tensors die with a count of 1: every op result, every call's output
// (docs/performance.md, "Measured decisions": sole owner). Sound because nothing can take a new
// reference without holding one already (there are no weak references to tensors or storages;
// borrowed handles never release); the acquire load pairs with the release half of the
// decrements other owners made before.
inline bool sole_owner(const std::atomic<int32_t>& refs) { return refs.load(std::memory_order_acquire) == 1; }

// A 64-byte-aligned buffer shared by tensors that view it (reshape, x[i]).
struct Storage {
  std::atomic<int32_t> refs{1};
  uint32_t flags = 0;
  size_t bytes = 0;
  void* data = nullptr;

  static constexpr uint32_t kInline = 1;    // data follows the header in the same allocation
  static constexpr uint32_t kPooled = 2;    // data comes from the caching allocator
  static constexpr uint32_t kExternal = 4;  // external memory: never freed, never written (external.cpp)
  static constexpr uint32_t kHoldsList = 8; // data holds one TensorList* (released on destroy)
  static constexpr uint32_t kWithImpl = 16; // inline, in one block after its first TensorImpl

  static Storage* allocate(size_t bytes);
  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (sole_owner(refs) || refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy();
  }
  void destroy();
};

struct FrameToken;  // trace/frame.h: identifies a tracing frame and whether it is still open
struct DefinedCheck;  // trace/frame.h: a value that may have none at run time (a zero-trip loop)
void retain_token(FrameToken* t);
void release_token(FrameToken* t);

enum class ImplKind : uint8_t {
  Concrete,   // has a buffer
  Symbolic,   // a value in a graph being traced
  Undefined,  // a variable with no value after staged control flow; reading it raises
};

struct TensorImpl {
  std::atomic<int32_t> refs{1};
  DType dtype = DType::Float32;
  ImplKind kind = ImplKind::Concrete;
  // Undefined: one branch of a staged if gave the variable a value of this type (dtype, shape,
  // elem_*), the other none; a staged loop's probe learns a loop variable's type from it.
  bool typed_undefined = false;
  DType elem_dtype = DType::Float32;  // symbolic List values: the element dtype
  // Symbolic values: the rank is not known (`shape` is empty); for a List, no write has typed
  // the elements yet.
  bool rank_unknown = false;
  bool elem_shape_varies = false;     // symbolic List values: elements may differ in shape
  // Made with its storage and data in one block by make_tensor (tensor.cpp), and so kept whole
  // for reuse when its last handle goes while it holds the storage's only reference: set
  // once, so that destroy() tests one flag instead of how the tensor was made.
  bool parkable = false;
  Shape shape;
  // Concrete.
  void* data = nullptr;
  Storage* storage = nullptr;
  // Symbolic: (node, output) in the graph of `frame`.
  FrameToken* frame = nullptr;
  uint32_t node = 0;
  uint32_t output = 0;
  // Undefined / maybe-undefined: why, for the error message.
  std::string* note = nullptr;
  // Symbolic: a value a staged loop gave a variable that had none before it, owned by the
  // trace; reading it asserts at run time that the loop ran (frame.cpp).
  const DefinedCheck* defined_check = nullptr;

  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (sole_owner(refs) || refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy();
  }
  void destroy();
  void destroy_unparked();  // destroy() without keeping the block for reuse (tensor.cpp)

  // From the runtime's small-block cache: every eager op result needs one, and malloc would
  // be a large part of a small op's cost.
  static void* operator new(size_t bytes);
  static void operator delete(void* p, size_t bytes);
};

}  // namespace ag::detail
