// Signature keys: the words a call's arguments hash to (the cached-call hot path: no allocation
// for the common case, no strings), and the input_signature checks made while building them.
#include <fmt/format.h>

#include <cstring>

#include "ag/detail/ops_internal.h"
#include "ag/detail/variable_state.h"
#include "ag/variable.h"
#include "signature.h"

namespace ag::detail {
namespace {

// Key word tags (top byte) keep differently shaped argument lists from colliding.
constexpr uint64_t kTagTensor = 1ull << 56, kTagVariable = 2ull << 56, kTagBool = 3ull << 56, kTagInt = 4ull << 56,
                   kTagFloat = 5ull << 56, kTagString = 6ull << 56, kTagRank = 7ull << 56;

std::string arg_label(size_t index, const SignatureRules& rules, const TensorSpec* spec = nullptr) {
  if (rules.param_names && index < rules.param_names->size() && !(*rules.param_names)[index].empty())
    return fmt::format("argument {} '{}'", index, (*rules.param_names)[index]);
  if (spec && !spec->name().empty()) return fmt::format("argument {} '{}'", index, spec->name());
  return fmt::format("argument {}", index);
}

std::string fn_label(const SignatureRules& rules) {
  return rules.function_name ? fmt::format("Function '{}'", *rules.function_name) : std::string("Function");
}

void push_tensor(KeyBuf& key, DType dtype, const Shape& shape) {
  key.push(kTagTensor | (static_cast<uint64_t>(dtype) << 8) | static_cast<uint64_t>(shape.rank()));
  for (int64_t d : shape) key.push(static_cast<uint64_t>(d));
}

void push_string(KeyBuf& key, std::string_view s) {
  key.push(kTagString | s.size());
  for (size_t i = 0; i < s.size(); i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, s.data() + i, std::min<size_t>(8, s.size() - i));
    key.push(w);
  }
}

uint64_t double_bits(double f) {
  uint64_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

void check_against_spec(const Tensor& t, const TensorSpec& spec, size_t index, const SignatureRules& rules) {
  if (t.dtype() != spec.dtype())
    throw TypeError(fmt::format("{} of {} has dtype {} but the input_signature expects {}", arg_label(index, rules, &spec),
                                fn_label(rules), dtype_name(t.dtype()), spec.str()));
  if (!spec.has_unknown_rank() && !spec.shape().is_compatible_with(t.shape()))
    throw ValueError(fmt::format("{} of {} has shape {} which does not match the input_signature {}",
                                 arg_label(index, rules, &spec), fn_label(rules), t.shape().tf_str(), spec.str()));
}

// get_concrete_function(TensorSpec) on a Function with an input_signature: the requested spec
// must describe tensors the signature accepts (each signature dim unknown or equal), since the
// concrete function returned is the signature's own.
void check_spec_against_spec(const TensorSpec& s, const TensorSpec& spec, size_t index, const SignatureRules& rules) {
  if (s.dtype() != spec.dtype())
    throw TypeError(fmt::format("get_concrete_function: {} of {} is {} but the input_signature expects {}",
                                arg_label(index, rules, &spec), fn_label(rules), s.str(), spec.str()));
  if (spec.has_unknown_rank()) return;
  bool fits = s.shape().rank() == spec.shape().rank();
  for (int64_t d = 0; fits && d < spec.shape().rank(); ++d)
    fits = spec.shape()[d] == Shape::kUnknown || spec.shape()[d] == s.shape()[d];
  if (!fits)
    throw ValueError(fmt::format("get_concrete_function: {} of {} is {} which does not match the input_signature {}",
                                 arg_label(index, rules, &spec), fn_label(rules), s.str(), spec.str()));
}

const TensorSpec* spec_for(size_t tensor_index, const SignatureRules& rules) {
  if (!rules.input_signature) return nullptr;
  return &(*rules.input_signature)[tensor_index];
}

}  // namespace

uint64_t hash_words(const uint64_t* w, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  for (size_t i = 0; i < n; ++i) {
    h ^= w[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xbf58476d1ce4e5b9ull;
  }
  return h ^ (h >> 31);
}

uint64_t KeyBuf::hash() const { return hash_words(data(), n_); }

void KeyBuf::spill(uint64_t w) {
  if (heap_.empty()) heap_.assign(inline_, inline_ + kInline);
  heap_.push_back(w);
}

namespace {

// The key words of a Variable argument (its identity) and of a plain value (kind and value);
// shared by call keys (build_key) and signature keys (key_of), which must agree.
void push_variable(KeyBuf& key, const VariableState* v) {
  key.push(kTagVariable);
  key.push(reinterpret_cast<uint64_t>(v));
}
void push_plain(KeyBuf& key, ArgKind kind, int64_t i, double f, std::string_view s) {
  switch (kind) {
    case ArgKind::Bool: key.push(kTagBool | static_cast<uint64_t>(i)); break;
    case ArgKind::Int:
      key.push(kTagInt);
      key.push(static_cast<uint64_t>(i));
      break;
    case ArgKind::Float:
      key.push(kTagFloat);
      key.push(double_bits(f));
      break;
    case ArgKind::String: push_string(key, s); break;
    default: throw InternalError("push_plain: not a plain value");
  }
}

}  // namespace

void build_key(std::span<const ArgView> args, const SignatureRules& rules, KeyBuf& key) {
  size_t tensor_index = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgView& a = args[i];
    switch (a.kind) {
      case ArgKind::Tensor: {
        const Tensor& t = a.tensor();
        if (!t.has_value())
          throw ValueError(fmt::format("{} of {} has no value (a default-constructed or undefined ag::Tensor)",
                                       arg_label(i, rules), fn_label(rules)));
        if (const TensorSpec* spec = spec_for(tensor_index, rules)) {
          check_against_spec(t, *spec, i, rules);
          if (spec->has_unknown_rank()) key.push(kTagRank | static_cast<uint64_t>(t.rank()));
        } else {
          push_tensor(key, t.dtype(), t.shape());
        }
        ++tensor_index;
        break;
      }
      case ArgKind::TensorSpec: {
        const TensorSpec& s = a.spec();
        if (s.has_unknown_rank())
          throw ValueError(fmt::format(
              "get_concrete_function: {} is an unknown-rank TensorSpec; a concrete function needs a rank (calls "
              "with an unknown-rank input_signature trace once per rank)",
              arg_label(i, rules)));
        if (const TensorSpec* spec = spec_for(tensor_index, rules)) {
          check_spec_against_spec(s, *spec, i, rules);
          if (spec->has_unknown_rank()) key.push(kTagRank | static_cast<uint64_t>(s.shape().rank()));
        } else {
          push_tensor(key, s.dtype(), s.shape());
        }
        ++tensor_index;
        break;
      }
      case ArgKind::Variable: push_variable(key, static_cast<const Variable*>(a.ptr)->state().get()); break;
      default: push_plain(key, a.kind, a.i, a.f, a.s); break;
    }
  }
}

void key_of(const Signature& sig, const SignatureRules& rules, KeyBuf& key) {
  size_t tensor_index = 0;
  for (const ArgSig& a : sig.args) {
    switch (a.kind) {
      case ArgKind::Tensor:
      case ArgKind::TensorSpec:
        if (const TensorSpec* spec = spec_for(tensor_index, rules)) {
          if (spec->has_unknown_rank()) key.push(kTagRank | static_cast<uint64_t>(a.shape.rank()));
        } else {
          push_tensor(key, a.dtype, a.shape);
        }
        ++tensor_index;
        break;
      case ArgKind::Variable: push_variable(key, a.variable.get()); break;
      default: push_plain(key, a.kind, a.i, a.f, a.s); break;
    }
  }
}

}  // namespace ag::detail
