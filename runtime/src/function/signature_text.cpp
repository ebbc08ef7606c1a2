// Signatures as text: parameter lists for ConcreteFunction::signature(), and the field-by-field
// differences AG_LOG=retrace and the retracing warning report.
#include <cxxabi.h>
#include <fmt/format.h>

#include <bit>

#include "ag/detail/variable_state.h"
#include "signature.h"

namespace ag::detail {
namespace {

std::string arg_name(const ArgSig& a, size_t i) { return a.name.empty() ? fmt::format("arg{}", i) : a.name; }

std::string tensor_str(const ArgSig& t) {
  return (t.rank_unknown ? TensorSpec::unknown_rank(t.dtype) : TensorSpec(t.shape, t.dtype)).str();
}

// One difference between two signatures' arguments: `where` is "" or an element ("[2]").
struct Difference {
  std::string where;
  std::string what;
};

void tensor_differences(const ArgSig& from, const ArgSig& to, const std::string& where, std::vector<Difference>& d) {
  if (from.dtype != to.dtype)
    d.push_back({where, fmt::format("dtype {} -> {}", dtype_name(from.dtype), dtype_name(to.dtype))});
  auto shape = [](const ArgSig& t) { return t.rank_unknown ? std::string("[*]") : t.shape.str(); };
  if (!(from.shape == to.shape) || from.rank_unknown != to.rank_unknown)
    d.push_back({where, fmt::format("shape {} -> {}", shape(from), shape(to))});
}

// Differences of one argument.
std::vector<Difference> field_differences(const ArgSig& from, const ArgSig& to) {
  std::vector<Difference> d;
  if (from.kind != to.kind) return {{"", "kind changed"}};
  switch (to.kind) {
    case ArgKind::Tensor: tensor_differences(from, to, "", d); break;
    case ArgKind::TensorList:
      if (from.elems.size() != to.elems.size()) {
        d.push_back({"", fmt::format("length {} -> {}", from.elems.size(), to.elems.size())});
        break;
      }
      for (size_t k = 0; k < to.elems.size(); ++k) tensor_differences(from.elems[k], to.elems[k], fmt::format("[{}]", k), d);
      break;
    case ArgKind::ScalarList:
      if (from.elems.size() != to.elems.size()) {
        d.push_back({"", fmt::format("value {} -> {}", value_str(from), value_str(to))});
        break;
      }
      for (size_t k = 0; k < to.elems.size(); ++k)
        if (value_str(from.elems[k]) != value_str(to.elems[k]))
          d.push_back({fmt::format("[{}]", k),
                       fmt::format("value {} -> {}", value_str(from.elems[k]), value_str(to.elems[k]))});
      break;
    case ArgKind::Variable:
      if (!same_variable_spec(*from.variable, *to.variable))
        d.push_back({"", fmt::format("Variable {} -> {}", from.variable->describe(), to.variable->describe())});
      break;
    default:
      if (value_str(from) != value_str(to)) d.push_back({"", fmt::format("value {} -> {}", value_str(from), value_str(to))});
  }
  return d;
}

}  // namespace

std::string value_str(const ArgSig& a) {
  switch (a.kind) {
    case ArgKind::Bool: return a.i ? "true" : "false";
    case ArgKind::Int: return std::to_string(a.i);
    // A float argument as the float it was (0.1f, not 0.10000000149011612).
    case ArgKind::Float: return a.type_name == "float" ? fmt::format("{}", static_cast<float>(a.f)) : fmt::format("{}", a.f);
    case ArgKind::String: return fmt::format("\"{}\"", a.s);
    case ArgKind::Variable: return a.variable->describe();
    case ArgKind::ScalarList: {
      std::string s = "[";
      for (size_t k = 0; k < a.elems.size(); ++k) s += (k ? ", " : "") + value_str(a.elems[k]);
      return s + "]";
    }
    default: return {};
  }
}

std::string Signature::params_str() const {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) {
    const ArgSig& a = args[i];
    if (i) s += ", ";
    s += arg_name(a, i) + ": ";
    switch (a.kind) {
      case ArgKind::Tensor: s += tensor_str(a); break;
      case ArgKind::TensorList:
        s += "[";
        for (size_t k = 0; k < a.elems.size(); ++k) s += (k ? ", " : "") + tensor_str(a.elems[k]);
        s += "]";
        break;
      case ArgKind::Variable: s += "Variable " + a.variable->describe(); break;
      default: s += fmt::format("{} = {}", a.type_name, value_str(a));
    }
  }
  return s;
}

std::string describe_difference(const Signature& from, const Signature& to) {
  if (from.args.size() != to.args.size()) return "a different number of arguments";
  std::string out;
  for (size_t i = 0; i < to.args.size(); ++i) {
    std::vector<Difference> differences = field_differences(from.args[i], to.args[i]);
    if (to.args[i].kind == ArgKind::Variable && from.args[i].kind == ArgKind::Variable &&
        variable_alias(from, i) != variable_alias(to, i)) {
      const uint64_t alias = variable_alias(to, i);
      differences.push_back({"", alias ? fmt::format("now the same Variable as arg {}", to.args[alias - 1].param)
                                       : std::string("now a Variable of its own (it was the same as an earlier one)")});
    }
    for (const Difference& d : differences) {
      if (!out.empty()) out += "; ";
      const std::string& name = to.args[i].name;
      const uint32_t param = to.args[i].param;
      out += name.empty() ? fmt::format("arg {}{}: {}", param, d.where, d.what)
                          : fmt::format("arg {} '{}'{}: {}", param, name, d.where, d.what);
    }
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
