// Signature keys, descriptions, matching and differences.
#include "signature.h"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstring>

#include "ag/detail/ops_internal.h"
#include "ag/detail/variable_state.h"
#include "ag/variable.h"

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

Signature describe(std::span<const ArgView> args, const SignatureRules& rules) {
  Signature sig;
  size_t tensor_index = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgView& a = args[i];
    ArgSig s;
    s.kind = a.kind == ArgKind::TensorSpec ? ArgKind::Tensor : a.kind;
    if (rules.param_names && i < rules.param_names->size()) s.name = (*rules.param_names)[i];
    switch (a.kind) {
      case ArgKind::Tensor:
      case ArgKind::TensorSpec: {
        const TensorSpec* spec = spec_for(tensor_index, rules);
        if (a.kind == ArgKind::Tensor) s.dtype = a.tensor().dtype(), s.shape = a.tensor().shape();
        else s.dtype = a.spec().dtype(), s.shape = a.spec().shape();
        if (spec) {
          const int64_t rank = s.shape.rank();
          s.shape = spec->has_unknown_rank() ? Shape() : spec->shape();
          if (spec->has_unknown_rank()) s.shape.resize(rank, Shape::kUnknown);
          if (!spec->name().empty() && s.name.empty()) s.name = spec->name();
        }
        ++tensor_index;
        break;
      }
      case ArgKind::Variable: s.variable = static_cast<const Variable*>(a.ptr)->state(); break;
      case ArgKind::Bool:
      case ArgKind::Int: s.i = a.i; break;
      case ArgKind::Float: s.f = a.f; break;
      case ArgKind::String: s.s = std::string(a.s); break;
    }
    if (a.type) s.type_name = demangle(*a.type);
    sig.args.push_back(std::move(s));
  }
  return sig;
}

bool matches(const Signature& sig, std::span<const ArgView> args) {
  if (sig.args.size() != args.size()) return false;
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSig& s = sig.args[i];
    const ArgView& a = args[i];
    switch (a.kind) {
      case ArgKind::Tensor:
        if (s.kind != ArgKind::Tensor || s.dtype != a.tensor().dtype() || !s.shape.is_compatible_with(a.tensor().shape()))
          return false;
        break;
      case ArgKind::TensorSpec:
        if (s.kind != ArgKind::Tensor || s.dtype != a.spec().dtype() || !s.shape.is_compatible_with(a.spec().shape()))
          return false;
        break;
      case ArgKind::Variable:
        if (s.variable.get() != static_cast<const Variable*>(a.ptr)->state().get()) return false;
        break;
      case ArgKind::Bool:
      case ArgKind::Int:
        if (s.kind != a.kind || s.i != a.i) return false;
        break;
      case ArgKind::Float:
        if (s.kind != a.kind || double_bits(s.f) != double_bits(a.f)) return false;
        break;
      case ArgKind::String:
        if (s.kind != a.kind || s.s != a.s) return false;
        break;
    }
  }
  return true;
}

int specificity(const Signature& sig) {
  int n = 0;
  for (const ArgSig& a : sig.args)
    if (a.kind == ArgKind::Tensor)
      for (int64_t d : a.shape) n += d >= 0;
  return n;
}

bool same_family(const Signature& a, const Signature& b) {
  if (a.args.size() != b.args.size()) return false;
  for (size_t i = 0; i < a.args.size(); ++i) {
    const ArgSig &x = a.args[i], &y = b.args[i];
    if (x.kind != y.kind) return false;
    switch (x.kind) {
      case ArgKind::Tensor:
        if (x.dtype != y.dtype || x.shape.rank() != y.shape.rank()) return false;
        break;
      case ArgKind::Variable:
        if (x.variable != y.variable) return false;
        break;
      case ArgKind::Float:
        if (double_bits(x.f) != double_bits(y.f)) return false;
        break;
      case ArgKind::String:
        if (x.s != y.s) return false;
        break;
      default:
        if (x.i != y.i) return false;
    }
  }
  return true;
}

Signature generalize(const Signature& sig, const Signature& other) {
  Signature out = sig;
  for (size_t i = 0; i < out.args.size(); ++i)
    if (out.args[i].kind == ArgKind::Tensor)
      for (int64_t d = 0; d < out.args[i].shape.rank(); ++d)
        if (out.args[i].shape[d] != other.args[i].shape[d]) out.args[i].shape[d] = Shape::kUnknown;
  return out;
}

Signature generalize_all(const Signature& sig) {
  Signature out = sig;
  for (ArgSig& a : out.args)
    if (a.kind == ArgKind::Tensor)
      for (int64_t& d : a.shape) d = Shape::kUnknown;
  return out;
}

namespace {

std::string value_str(const ArgSig& a) {
  switch (a.kind) {
    case ArgKind::Bool: return a.i ? "true" : "false";
    case ArgKind::Int: return std::to_string(a.i);
    case ArgKind::Float: return fmt::format("{}", a.f);
    case ArgKind::String: return fmt::format("\"{}\"", a.s);
    case ArgKind::Variable: return a.variable->describe();
    default: return {};
  }
}

std::string arg_name(const ArgSig& a, size_t i) { return a.name.empty() ? fmt::format("arg{}", i) : a.name; }

// Differences of one argument, as "what: from -> to" pieces.
std::vector<std::string> field_differences(const ArgSig& from, const ArgSig& to) {
  std::vector<std::string> d;
  if (from.kind != to.kind) return {"kind changed"};
  switch (to.kind) {
    case ArgKind::Tensor:
      if (from.dtype != to.dtype) d.push_back(fmt::format("dtype {} -> {}", dtype_name(from.dtype), dtype_name(to.dtype)));
      if (!(from.shape == to.shape)) d.push_back(fmt::format("shape {} -> {}", from.shape.str(), to.shape.str()));
      break;
    case ArgKind::Variable:
      if (from.variable != to.variable) d.push_back(fmt::format("another Variable: {}", to.variable->describe()));
      break;
    default:
      if (value_str(from) != value_str(to)) d.push_back(fmt::format("value {} -> {}", value_str(from), value_str(to)));
  }
  return d;
}

}  // namespace

std::string Signature::params_str() const {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSig& a = args[i];
    if (i) s += ", ";
    s += arg_name(a, i) + ": ";
    switch (a.kind) {
      case ArgKind::Tensor: s += TensorSpec(a.shape, a.dtype).str(); break;
      case ArgKind::Variable: s += "Variable " + a.variable->describe(); break;
      default: s += fmt::format("{} = {}", a.type_name, value_str(a));
    }
  }
  return s;
}

std::string describe_difference(const Signature& from, const Signature& to) {
  if (from.args.size() != to.args.size()) return "a different number of arguments";
  std::string out;
  for (size_t i = 0; i < to.args.size(); ++i)
    for (const std::string& d : field_differences(from.args[i], to.args[i])) {
      if (!out.empty()) out += "; ";
      const std::string& name = to.args[i].name;
      out += name.empty() ? fmt::format("arg {}: {}", i, d) : fmt::format("arg {} '{}': {}", i, name, d);
    }
  return out.empty() ? "no difference" : out;
}

const Signature* nearest(const std::vector<const Signature*>& candidates, const Signature& to) {
  const Signature* best = nullptr;
  size_t best_count = SIZE_MAX;
  for (const Signature* c : candidates) {
    if (c->args.size() != to.args.size()) continue;
    size_t count = 0;
    for (size_t i = 0; i < to.args.size(); ++i) count += field_differences(c->args[i], to.args[i]).size();
    if (count < best_count) best = c, best_count = count;
  }
  return best;
}

std::string demangle(const std::type_info& t) {
  if (t == typeid(int)) return "int";
  if (t == typeid(long)) return "int64_t";
  if (t == typeid(double)) return "double";
  if (t == typeid(float)) return "float";
  if (t == typeid(bool)) return "bool";
  if (t == typeid(std::string)) return "std::string";
  if (t == typeid(std::string_view)) return "std::string_view";
  int status = 0;
  char* d = abi::__cxa_demangle(t.name(), nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : t.name();
  std::free(d);
  return s;
}

}  // namespace ag::detail

namespace ag {
std::string TensorSpec::str() const {
  const std::string shape = unknown_rank_ ? "None" : shape_.tf_str();
  if (name_.empty()) return fmt::format("TensorSpec(shape={}, dtype={})", shape, dtype_name(dtype_));
  return fmt::format("TensorSpec(shape={}, dtype={}, name='{}')", shape, dtype_name(dtype_), name_);
}
}  // namespace ag
