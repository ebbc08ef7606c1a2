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

// A tensor's entry: its dtype and shape, or the input_signature's shape when there is one (the
// concrete function traced serves every shape the spec allows).
ArgSig tensor_sig(DType dtype, const Shape& shape, bool rank_unknown, const TensorSpec* spec) {
  ArgSig s;
  s.kind = ArgKind::Tensor;
  s.dtype = dtype;
  s.shape = shape;
  s.rank_unknown = rank_unknown;  // an unknown-rank TensorSpec given to get_concrete_function
  if (spec && !rank_unknown) {
    const int64_t rank = s.shape.rank();
    s.shape = spec->has_unknown_rank() ? Shape() : spec->shape();
    if (spec->has_unknown_rank()) s.shape.resize(rank, Shape::kUnknown);
  }
  return s;
}

const TensorSpec* spec_at(size_t slot, const SignatureRules& rules) {
  if (!rules.input_signature || slot >= rules.input_signature->size()) return nullptr;
  return &(*rules.input_signature)[slot];
}

ArgSig scalar_element(ArgKind kind, uint64_t bits, const std::string& type_name) {
  ArgSig e;
  e.kind = kind;
  if (kind == ArgKind::Float) e.f = std::bit_cast<double>(bits);
  else e.i = static_cast<int64_t>(bits);
  e.type_name = type_name;
  return e;
}

// Whether a tensor (or a spec: `rank_unknown` when it has no rank) fits a signature's entry.
bool tensor_fits(const ArgSig& s, DType dtype, const Shape& shape, bool rank_unknown = false) {
  return s.kind == ArgKind::Tensor && s.dtype == dtype &&
         (s.rank_unknown || (!rank_unknown && s.shape.is_compatible_with(shape)));
}

// Calls f(tensor entry) for each tensor of a signature argument (itself, or its elements).
template <class A, class F>
void for_each_tensor_sig(A& a, F&& f) {
  if (a.kind == ArgKind::Tensor) f(a);
  else if (a.kind == ArgKind::TensorList)
    for (auto& e : a.elems) f(e);
}

bool same_scalar(const ArgSig& x, const ArgSig& y) {
  if (x.kind != y.kind) return false;
  switch (x.kind) {
    case ArgKind::Float: return double_bits(x.f) == double_bits(y.f);
    case ArgKind::String: return x.s == y.s;
    default: return x.i == y.i;
  }
}

}  // namespace

Signature describe(std::span<const ArgView> args, const SignatureRules& rules) {
  Signature sig;
  size_t slot = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgView& a = args[i];
    ArgSig s;
    switch (a.kind) {
      case ArgKind::Tensor:
      case ArgKind::TensorSpec: {
        const TensorSpec* spec = spec_at(slot++, rules);
        s = a.kind == ArgKind::Tensor
                ? tensor_sig(a.tensor().dtype(), a.tensor().shape(), false, spec)
                : tensor_sig(a.spec().dtype(), a.spec().shape(), a.spec().has_unknown_rank(), spec);
        if (spec) s.name = spec->name();  // unless the parameter has a name (below)
        break;
      }
      case ArgKind::TensorList:
      case ArgKind::TensorSpecList:
        s.kind = ArgKind::TensorList;
        s.fixed_size = a.fixed_size;
        for (size_t k = 0; k < a.count(); ++k) {
          const bool call = a.kind == ArgKind::TensorList;
          const DType dtype = call ? a.tensors()[k].dtype() : a.specs()[k].dtype();
          const Shape& shape = call ? a.tensors()[k].shape() : a.specs()[k].shape();
          const bool rank_unknown = !call && a.specs()[k].has_unknown_rank();
          s.elems.push_back(tensor_sig(dtype, shape, rank_unknown, spec_at(slot++, rules)));
        }
        break;
      case ArgKind::ScalarList: {
        s.kind = ArgKind::ScalarList;
        s.fixed_size = a.fixed_size;
        const std::string elem = demangle(*a.type);
        s.type_name =
            a.fixed_size ? fmt::format("std::array<{}, {}>", elem, a.count()) : fmt::format("std::vector<{}>", elem);
        for (size_t k = 0; k < a.count(); ++k)
          s.elems.push_back(scalar_element(a.elem_kind, a.scalar_at(a.ptr, k), elem));
        break;
      }
      case ArgKind::Variable:
        s.kind = ArgKind::Variable;
        s.variable = static_cast<const Variable*>(a.ptr)->state();
        break;
      case ArgKind::Bool:
      case ArgKind::Int: s.kind = a.kind, s.i = a.i; break;
      case ArgKind::Float: s.kind = a.kind, s.f = a.f; break;
      case ArgKind::String: s.kind = a.kind, s.s = std::string(a.s); break;
      case ArgKind::Baked: throw InternalError("a signature of a call that left a plain argument out");
    }
    if (rules.param_names && i < rules.param_names->size() && !(*rules.param_names)[i].empty())
      s.name = (*rules.param_names)[i];
    if (a.type && a.kind != ArgKind::ScalarList) s.type_name = demangle(*a.type);
    s.param = static_cast<uint32_t>(param_of_arg(rules.arg_params, i));
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
        if (!tensor_fits(s, a.tensor().dtype(), a.tensor().shape())) return false;
        break;
      case ArgKind::TensorSpec:
        if (!tensor_fits(s, a.spec().dtype(), a.spec().shape(), a.spec().has_unknown_rank())) return false;
        break;
      case ArgKind::TensorList:
      case ArgKind::TensorSpecList:
        if (s.kind != ArgKind::TensorList || s.elems.size() != a.count()) return false;
        for (size_t k = 0; k < a.count(); ++k) {
          const bool fits = a.kind == ArgKind::TensorList
                                ? tensor_fits(s.elems[k], a.tensors()[k].dtype(), a.tensors()[k].shape())
                                : tensor_fits(s.elems[k], a.specs()[k].dtype(), a.specs()[k].shape(),
                                              a.specs()[k].has_unknown_rank());
          if (!fits) return false;
        }
        break;
      case ArgKind::ScalarList:
        if (s.kind != ArgKind::ScalarList || s.elems.size() != a.count()) return false;
        for (size_t k = 0; k < a.count(); ++k)
          if (scalar_key_bits(s.elems[k]) != a.scalar_at(a.ptr, k)) return false;
        break;
      case ArgKind::Variable:
        if (s.kind != ArgKind::Variable || !same_variable_spec(*s.variable, variable_of(a)) ||
            variable_alias(sig, i) != variable_alias(args, i))
          return false;
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
      case ArgKind::Baked: return false;  // only ConcreteFunction calls leave one out
    }
  }
  return true;
}

const VariableState& variable_of(const ArgView& a) { return *static_cast<const Variable*>(a.ptr)->state(); }

uint64_t variable_alias(std::span<const ArgView> args, size_t i) {
  const VariableState* v = &variable_of(args[i]);
  for (size_t k = 0; k < i; ++k)
    if (args[k].kind == ArgKind::Variable && &variable_of(args[k]) == v) return k + 1;
  return 0;
}

uint64_t variable_alias(const Signature& sig, size_t i) {
  for (size_t k = 0; k < i; ++k)
    if (sig.args[k].kind == ArgKind::Variable && sig.args[k].variable == sig.args[i].variable) return k + 1;
  return 0;
}

bool same_variable_spec(const VariableState& traced, const VariableState& got) {
  return traced.dtype == got.dtype && traced.shape == got.shape;
}

int specificity(const Signature& sig) {
  int n = 0;
  for (const ArgSig& a : sig.args)
    for_each_tensor_sig(a, [&](const ArgSig& t) {
      for (int64_t d : t.shape) n += d >= 0;
      n -= t.rank_unknown;  // less specific than a scalar
    });
  return n;
}

bool same_family(const Signature& a, const Signature& b) {
  if (a.args.size() != b.args.size()) return false;
  auto same_tensor_type = [](const ArgSig& x, const ArgSig& y) {
    return x.dtype == y.dtype && x.rank_unknown == y.rank_unknown && x.shape.rank() == y.shape.rank();
  };
  for (size_t i = 0; i < a.args.size(); ++i) {
    const ArgSig &x = a.args[i], &y = b.args[i];
    if (x.kind != y.kind) return false;
    switch (x.kind) {
      case ArgKind::Tensor:
        if (!same_tensor_type(x, y)) return false;
        break;
      case ArgKind::TensorList:
        if (x.elems.size() != y.elems.size()) return false;
        for (size_t k = 0; k < x.elems.size(); ++k)
          if (!same_tensor_type(x.elems[k], y.elems[k])) return false;
        break;
      case ArgKind::ScalarList:
        if (x.elems.size() != y.elems.size()) return false;
        for (size_t k = 0; k < x.elems.size(); ++k)
          if (!same_scalar(x.elems[k], y.elems[k])) return false;
        break;
      case ArgKind::Variable:
        if (!same_variable_spec(*x.variable, *y.variable) || variable_alias(a, i) != variable_alias(b, i)) return false;
        break;
      default:
        if (!same_scalar(x, y)) return false;
    }
  }
  return true;
}

Signature generalize(const Signature& sig, const Signature& other) {
  Signature out = sig;
  auto dims = [](ArgSig& t, const ArgSig& o) {
    for (int64_t d = 0; d < t.shape.rank(); ++d)
      if (t.shape[d] != o.shape[d]) t.shape[d] = Shape::kUnknown;
  };
  for (size_t i = 0; i < out.args.size(); ++i) {
    ArgSig& a = out.args[i];
    if (a.kind == ArgKind::Tensor) dims(a, other.args[i]);
    else if (a.kind == ArgKind::TensorList)
      for (size_t k = 0; k < a.elems.size(); ++k) dims(a.elems[k], other.args[i].elems[k]);
  }
  return out;
}

const Signature* nearest_in_family(const std::vector<const Signature*>& cached, const Signature& sig) {
  const Signature* best = nullptr;
  int best_kept = -1, best_known = -1;
  for (const Signature* c : cached) {
    if (!same_family(*c, sig)) continue;
    const int kept = specificity(generalize(sig, *c));  // dims the relaxed signature keeps known
    const int known = specificity(*c);
    if (kept > best_kept || (kept == best_kept && known > best_known)) best = c, best_kept = kept, best_known = known;
  }
  return best;
}

Signature generalize_all(const Signature& sig) {
  Signature out = sig;
  for (ArgSig& a : out.args)
    for_each_tensor_sig(a, [](ArgSig& t) {
      for (int64_t& d : t.shape) d = Shape::kUnknown;
    });
  return out;
}

}  // namespace ag::detail
