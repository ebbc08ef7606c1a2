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

// Key word tags (top byte) keep differently shaped argument lists from colliding (kTagTensor:
// signature.h).
constexpr uint64_t kTagVariable = 2ull << 56, kTagBool = 3ull << 56, kTagInt = 4ull << 56,
                   kTagFloat = 5ull << 56, kTagString = 6ull << 56, kTagRank = 7ull << 56, kTagList = 8ull << 56,
                   kTagScalarList = 9ull << 56;

// Where an argument is, for messages: "argument 1 'ws'[2]" (elem < 0: not in a container).
std::string arg_label(size_t index, const SignatureRules& rules, const TensorSpec* spec = nullptr, int64_t elem = -1) {
  const std::string at = elem < 0 ? std::string() : fmt::format("[{}]", elem);
  const size_t param = param_of_arg(rules.arg_params, index);
  if (rules.param_names && index < rules.param_names->size() && !(*rules.param_names)[index].empty())
    return fmt::format("argument {} '{}'{}", param, (*rules.param_names)[index], at);
  if (spec && !spec->name().empty()) return fmt::format("argument {}{} '{}'", param, at, spec->name());
  return fmt::format("argument {}{}", param, at);
}

std::string fn_label(const SignatureRules& rules) {
  return rules.function_name ? fmt::format("Function '{}'", *rules.function_name) : std::string("Function");
}

void push_tensor(KeyBuf& key, DType dtype, const Shape& shape, bool rank_unknown = false) {
  if (rank_unknown) return key.push(tensor_key_word(dtype, kUnknownRankWord));
  key.push(tensor_key_word(dtype, shape.rank()));
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

void check_against_spec(const Tensor& t, const TensorSpec& spec, size_t index, int64_t elem, const SignatureRules& rules) {
  if (t.dtype() != spec.dtype())
    throw TypeError(fmt::format("{} of {} has dtype {} but the input_signature expects {}",
                                arg_label(index, rules, &spec, elem), fn_label(rules), dtype_name(t.dtype()), spec.str()));
  if (!spec.has_unknown_rank() && !spec.shape().is_compatible_with(t.shape()))
    throw ValueError(fmt::format("{} of {} has shape {} which does not match the input_signature {}",
                                 arg_label(index, rules, &spec, elem), fn_label(rules), t.shape().tf_str(), spec.str()));
}

// get_concrete_function(TensorSpec) on a Function with an input_signature: the requested spec
// must describe tensors the signature accepts (each signature dim unknown or equal), since the
// concrete function returned is the signature's own.
void check_spec_against_spec(const TensorSpec& s, const TensorSpec& spec, size_t index, int64_t elem,
                             const SignatureRules& rules) {
  if (s.dtype() != spec.dtype())
    throw TypeError(fmt::format("get_concrete_function: {} of {} is {} but the input_signature expects {}",
                                arg_label(index, rules, &spec, elem), fn_label(rules), s.str(), spec.str()));
  if (spec.has_unknown_rank()) return;
  bool fits = !s.has_unknown_rank() && s.shape().rank() == spec.shape().rank();
  for (int64_t d = 0; fits && d < spec.shape().rank(); ++d)
    fits = spec.shape()[d] == Shape::kUnknown || spec.shape()[d] == s.shape()[d];
  if (!fits)
    throw ValueError(fmt::format("get_concrete_function: {} of {} is {} which does not match the input_signature {}",
                                 arg_label(index, rules, &spec, elem), fn_label(rules), s.str(), spec.str()));
}

const TensorSpec* spec_for(size_t slot, const SignatureRules& rules) {
  if (!rules.input_signature) return nullptr;
  if (slot >= rules.input_signature->size()) throw InternalError("spec_for: more tensors than the input_signature has");
  return &(*rules.input_signature)[slot];
}

// The key words of one tensor of a call (a parameter, or an element of a container of them).
void push_call_tensor(KeyBuf& key, const Tensor& t, size_t index, int64_t elem, size_t slot, const SignatureRules& rules) {
  if (!t.has_value()) [[unlikely]]
    throw ValueError(fmt::format("{} of {} has no value (a default-constructed or undefined ag::Tensor)",
                                 arg_label(index, rules, nullptr, elem), fn_label(rules)));
  if (const TensorSpec* spec = spec_for(slot, rules)) {
    check_against_spec(t, *spec, index, elem, rules);
    if (spec->has_unknown_rank()) key.push(kTagRank | static_cast<uint64_t>(t.rank()));
  } else {
    push_tensor(key, t.dtype(), t.shape());
  }
}

// The key words of one TensorSpec given to get_concrete_function.
// An unknown-rank spec gives a concrete function of unknown rank (TensorFlow's); calls with an
// unknown-rank input_signature still trace once per rank (their graphs know more).
void push_spec(KeyBuf& key, const TensorSpec& s, size_t index, int64_t elem, size_t slot, const SignatureRules& rules) {
  if (const TensorSpec* spec = spec_for(slot, rules)) {
    check_spec_against_spec(s, *spec, index, elem, rules);
    if (spec->has_unknown_rank())
      key.push(kTagRank | static_cast<uint64_t>(s.has_unknown_rank() ? kUnknownRankWord : s.shape().rank()));
  } else {
    push_tensor(key, s.dtype(), s.shape(), s.has_unknown_rank());
  }
}

// A list of TensorSpecs for a std::array<Tensor, N> parameter must have N of them (a call's
// std::array has N by its type).
void check_spec_list_size(size_t index, size_t n, const SignatureRules& rules) {
  if (!rules.params || index >= rules.params->size()) return;
  const ParamLayout& p = (*rules.params)[index];
  if (p.kind == ParamLayout::Kind::TensorArray && p.size != n)
    throw ValueError(fmt::format("get_concrete_function: {} of {} is a std::array<ag::Tensor, {}> but {} TensorSpec(s) "
                                 "were given for it",
                                 arg_label(index, rules), fn_label(rules), p.size, n));
}

uint64_t list_header(uint64_t tag, size_t n) { return tag | static_cast<uint64_t>(n); }


// The key words of a Variable argument (its dtype, its shape and which earlier Variable argument
// it is, if any: as TensorFlow 2's trace type of a variable, not its identity) and of a plain
// value (kind and value); shared by call keys (build_key, call_has_key) and signature keys
// (key_of), which must agree.
void push_variable(KeyBuf& key, const VariableState& v, uint64_t alias) {
  key.push(kTagVariable | alias);
  push_tensor(key, v.dtype, v.shape);
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

void build_key(std::span<const ArgView> args, const SignatureRules& rules, KeyBuf& key) {
  size_t slot = 0;  // the next tensor's index among all tensors (its input_signature spec)
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgView& a = args[i];
    switch (a.kind) {
      case ArgKind::Tensor: push_call_tensor(key, a.tensor(), i, -1, slot++, rules); break;
      case ArgKind::TensorSpec: push_spec(key, a.spec(), i, -1, slot++, rules); break;
      case ArgKind::Variable: push_variable(key, variable_of(a), variable_alias(args, i)); break;
      case ArgKind::TensorList:
        key.push(list_header(kTagList, a.count()));
        for (size_t k = 0; k < a.count(); ++k)
          push_call_tensor(key, a.tensors()[k], i, static_cast<int64_t>(k), slot++, rules);
        break;
      case ArgKind::TensorSpecList:
        check_spec_list_size(i, a.count(), rules);
        key.push(list_header(kTagList, a.count()));
        for (size_t k = 0; k < a.count(); ++k) push_spec(key, a.specs()[k], i, static_cast<int64_t>(k), slot++, rules);
        break;
      case ArgKind::ScalarList:
        key.push(list_header(kTagScalarList, a.count()));
        for (size_t k = 0; k < a.count(); ++k) key.push(a.scalar_at(a.ptr, k));
        break;
      default: push_plain(key, a.kind, a.i, a.f, a.s); break;
    }
  }
}

namespace {

// Compares the words build_key would push with a stored key, without building it.
class KeyCursor {
 public:
  KeyCursor(const uint64_t* w, size_t n) : w_(w), end_(w + n) {}
  bool next(uint64_t v) { return w_ != end_ && *w_++ == v; }
  bool at_end() const { return w_ == end_; }
  bool tensor(const Tensor& t) {
    if (!t.has_value()) return false;  // build_key's error, on the slow path
    return type(t.dtype(), t.shape());
  }
  bool type(DType dtype, const Shape& shape) {
    if (!next(tensor_key_word(dtype, shape.rank()))) return false;
    for (int64_t d : shape)
      if (!next(static_cast<uint64_t>(d))) return false;
    return true;
  }

 private:
  const uint64_t* w_;
  const uint64_t* end_;
};

}  // namespace

bool call_has_key(std::span<const ArgView> args, const uint64_t* words, size_t n) {
  KeyCursor c(words, n);
  for (const ArgView& a : args) {
    bool same = false;
    switch (a.kind) {
      case ArgKind::Tensor: same = c.tensor(a.tensor()); break;
      case ArgKind::TensorList:
        same = c.next(list_header(kTagList, a.count()));
        for (size_t k = 0; same && k < a.count(); ++k) same = c.tensor(a.tensors()[k]);
        break;
      case ArgKind::Variable: {
        const VariableState& v = variable_of(a);
        same = c.next(kTagVariable | variable_alias(args, static_cast<size_t>(&a - args.data()))) &&
               c.type(v.dtype, v.shape);
        break;
      }
      case ArgKind::Bool: same = c.next(kTagBool | static_cast<uint64_t>(a.i)); break;
      case ArgKind::Int: same = c.next(kTagInt) && c.next(static_cast<uint64_t>(a.i)); break;
      case ArgKind::Float: same = c.next(kTagFloat) && c.next(double_bits(a.f)); break;
      case ArgKind::ScalarList:
        same = c.next(list_header(kTagScalarList, a.count()));
        for (size_t k = 0; same && k < a.count(); ++k) same = c.next(a.scalar_at(a.ptr, k));
        break;
      default: return false;  // strings, specs: build_key
    }
    if (!same) return false;
  }
  return c.at_end();
}

void key_of(const Signature& sig, const SignatureRules& rules, KeyBuf& key) {
  size_t slot = 0;
  auto tensor = [&](const ArgSig& a) {
    if (const TensorSpec* spec = spec_for(slot++, rules)) {
      if (spec->has_unknown_rank())
        key.push(kTagRank | static_cast<uint64_t>(a.rank_unknown ? kUnknownRankWord : a.shape.rank()));
    } else {
      push_tensor(key, a.dtype, a.shape, a.rank_unknown);
    }
  };
  for (const ArgSig& a : sig.args) {
    switch (a.kind) {
      case ArgKind::Tensor:
      case ArgKind::TensorSpec: tensor(a); break;
      case ArgKind::Variable: push_variable(key, *a.variable, variable_alias(sig, &a - sig.args.data())); break;
      case ArgKind::TensorList:
        key.push(list_header(kTagList, a.elems.size()));
        for (const ArgSig& e : a.elems) tensor(e);
        break;
      case ArgKind::ScalarList:
        key.push(list_header(kTagScalarList, a.elems.size()));
        for (const ArgSig& e : a.elems) key.push(scalar_key_bits(e));
        break;
      default: push_plain(key, a.kind, a.i, a.f, a.s); break;
    }
  }
}

}  // namespace ag::detail
