// Input signatures: what a call's arguments are, as a cache key (hot path, no allocation) and
// as a described Signature (slow path: tracing, matching, messages).
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ag/detail/arg_view.h"
#include "ag/detail/function_core.h"
#include "ag/detail/tensor_impl.h"
#include "ag/function_options.h"
#include "ag/tensor.h"

namespace ag::detail {

struct VariableState;

// Key words on the stack for the common case.
class KeyBuf {
 public:
  void push(uint64_t w) {
    if (n_ < kInline) inline_[n_] = w;
    else spill(w);
    ++n_;
  }
  const uint64_t* data() const { return n_ <= kInline ? inline_ : heap_.data(); }
  size_t size() const { return n_; }
  uint64_t hash() const;
  std::vector<uint64_t> to_vector() const { return {data(), data() + n_}; }

 private:
  static constexpr size_t kInline = 48;
  void spill(uint64_t w);
  uint64_t inline_[kInline];
  std::vector<uint64_t> heap_;
  size_t n_ = 0;
};

uint64_t hash_words(const uint64_t* w, size_t n);

struct ArgSig {
  ArgKind kind = ArgKind::Tensor;  // Tensor, Variable, Bool, Int, Float, String, TensorList or ScalarList
  DType dtype = DType::Float32;    // Tensor
  Shape shape;                     // Tensor; -1 = unknown dim
  bool rank_unknown = false;       // Tensor: from an unknown-rank TensorSpec (`shape` is empty)
  // TensorList: one Tensor ArgSig per element; ScalarList: one Bool, Int or Float ArgSig each.
  std::vector<ArgSig> elems;
  bool fixed_size = false;  // lists: a std::array
  std::shared_ptr<VariableState> variable;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::string type_name;  // plain values: the C++ type; ScalarList: "std::vector<int>"
  std::string name;       // the parameter's name
  uint32_t param = 0;     // the parameter's index (a struct's leaves share their parameter's)
};

// The key bits of a ScalarList element (ArgView::scalar_at's encoding): the value as int64 for
// Bool and Int, the bits of the double for Float.
inline uint64_t scalar_key_bits(const ArgSig& e) {
  return e.kind == ArgKind::Float ? std::bit_cast<uint64_t>(e.f) : static_cast<uint64_t>(e.i);
}

struct Signature {
  std::vector<ArgSig> args;
  // x: TensorSpec(shape=(2,), dtype=int32), n: int = 3,
  // ws: [TensorSpec(shape=(3,), dtype=float32)], ks: std::vector<int> = [1, -1]
  std::string params_str() const;
};

struct SignatureRules {
  // Per tensor, in graph-parameter order (an std::array<Tensor, N> parameter takes N), or null.
  const std::vector<TensorSpec>* input_signature = nullptr;
  const std::vector<std::string>* param_names = nullptr;
  const std::string* function_name = nullptr;
  const std::vector<ParamLayout>* params = nullptr;
  const std::vector<uint32_t>* arg_params = nullptr;  // FunctionInfo::arg_params
};

// The cache key of a call; validates tensors against the input signature (TypeError/ValueError
// naming the argument and the expected spec) and checks that tensors have values.
void build_key(std::span<const ArgView> args, const SignatureRules& rules, KeyBuf& key);
// Whether build_key(args) would build exactly `words`, for calls without an input_signature;
// false also where build_key would throw. Builds nothing: the inline cache's check.
bool call_has_key(std::span<const ArgView> args, const uint64_t* words, size_t n);

// The key word that starts a tensor argument's words (its dims follow).
inline constexpr uint64_t kTagTensor = 1ull << 56;
// The rank field of a tensor of unknown rank (ranks are at most Shape::kMaxRank).
inline constexpr int64_t kUnknownRankWord = 0xff;
inline uint64_t tensor_key_word(DType dtype, int64_t rank) {
  return kTagTensor | (static_cast<uint64_t>(dtype) << 8) | static_cast<uint64_t>(rank);
}

// call_has_key for a call whose arguments are `count` Tensors, `tensor_at(i)` the i-th (the
// Function has only Tensor parameters): the same answer, inlined into the cached call without
// call_has_key's dispatch on argument kinds (and unrolled where `count` is a constant).
template <class TensorAt>
[[gnu::always_inline]] inline bool tensors_have_key(size_t count, TensorAt&& tensor_at, const uint64_t* w, size_t n) {
  const uint64_t* const end = w + n;
  for (size_t i = 0; i < count; ++i) {
    const TensorImpl* t = detail::impl_of(tensor_at(i));
    if (!t || t->kind == ImplKind::Undefined) return false;  // build_key's error, on the slow path
    const int64_t rank = t->shape.rank();
    if (end - w <= rank || *w != tensor_key_word(t->dtype, rank)) return false;
    for (int64_t d = 0; d < rank; ++d)
      if (w[1 + d] != static_cast<uint64_t>(t->shape[static_cast<size_t>(d)])) return false;
    w += 1 + rank;
  }
  return w == end;
}

// Variable arguments are part of a signature by dtype, shape and aliasing, not identity (as in
// TensorFlow 2): a concrete function traced with one Variable runs with another of the same
// dtype and shape (ConcreteCore::bound_to). The aliasing of a Variable argument: 0 when no earlier
// argument is the same Variable, else 1 + the index of the first that is.
const VariableState& variable_of(const ArgView& a);
uint64_t variable_alias(std::span<const ArgView> args, size_t i);
uint64_t variable_alias(const Signature& sig, size_t i);
// Whether a Variable argument `got` can take the place of the traced `traced`.
bool same_variable_spec(const VariableState& traced, const VariableState& got);

// The key a concrete function with this signature is stored under.
void key_of(const Signature& sig, const SignatureRules& rules, KeyBuf& key);
Signature describe(std::span<const ArgView> args, const SignatureRules& rules);

// True when the call fits `sig` (dtypes equal, shapes compatible, values equal).
bool matches(const Signature& sig, std::span<const ArgView> args);
// Known dims in the signature's tensors: more is more specific.
int specificity(const Signature& sig);
// Same kinds, dtypes, ranks, lengths, values and variables: only dims may differ.
bool same_family(const Signature& a, const Signature& b);
// `sig` with dims that differ from `other` made unknown.
Signature generalize(const Signature& sig, const Signature& other);
// The cached signature reduce_retracing relaxes a new call against: of those with the same dtypes,
// ranks and plain values (same_family), the nearest, and of equally near ones the most specific
// (TensorFlow's most_specific_common_supertype against the trace it would replace). Null if none.
const Signature* nearest_in_family(const std::vector<const Signature*>& cached, const Signature& sig);
// `sig` with every tensor dim unknown.
Signature generalize_all(const Signature& sig);
// "arg 0 'x': shape [3] -> [4]; arg 1 'ws'[2]: dtype float32 -> int32; arg 2 'n': value 1 -> 2"
// (fields of `to` that differ from `from`).
std::string describe_difference(const Signature& from, const Signature& to);
// The signature closest to `to` among `candidates` (fewest differing fields), or null.
const Signature* nearest(const std::vector<const Signature*>& candidates, const Signature& to);
// A plain value as written in a signature: 3, 2.5, true, "relu", [1, -1].
std::string value_str(const ArgSig& a);

std::string demangle(const std::type_info& t);

}  // namespace ag::detail
