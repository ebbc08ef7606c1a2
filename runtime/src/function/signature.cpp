// Signatures described from a call's arguments, and matched, ranked and generalized (the slow
// path of a cache miss: tracing, most-specific matching, reduce_retracing).
#include "signature.h"

#include <fmt/format.h>

#include <bit>

#include "ag/detail/ops_internal.h"
#include "ag/detail/variable_state.h"
#include "ag/variable.h"

namespace ag::detail {
namespace {

uint64_t double_bits(double f) { return std::bit_cast<uint64_t>(f); }

const TensorSpec* spec_for(size_t tensor_index, const SignatureRules& rules) {
  if (!rules.input_signature) return nullptr;
  return &(*rules.input_signature)[tensor_index];
}

}  // namespace

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

}  // namespace ag::detail
