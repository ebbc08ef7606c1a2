// The non-template API of function.h's templates: building a Function's core (checking its
// options against its parameters) and forwarding calls to FunctionCore and ConcreteCore.
#include <fmt/format.h>

#include "../trace/frame.h"
#include "function_core.h"

namespace ag::detail {

std::shared_ptr<FunctionCore> make_function_core(FunctionOptions options, FunctionInfo info,
                                                 std::vector<ParamLayout> params, size_t num_outputs, Tracer tracer) {
  if (!options.input_signature.empty()) {
    size_t specs = 0, tensors = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].kind == ParamLayout::Kind::TensorVector) {
        const std::string name = i < info.params.size() && !info.params[i].empty() ? " '" + info.params[i] + "'" : "";
        throw ValueError(fmt::format(
            "ag::function '{}': parameter {}{} is a std::vector<ag::Tensor>, which an input_signature cannot describe "
            "(its length is not fixed); pass the tensors as separate ag::Tensor parameters, as a std::array<ag::Tensor, "
            "N> (N specs), or stacked into one tensor (ag::stack) with an unknown dim",
            info.name, param_of_arg(&info.arg_params, i), name));
      }
      specs += params[i].size;
      tensors += params[i].kind == ParamLayout::Kind::Tensor;
    }
    if (options.input_signature.size() != specs)
      throw ValueError(fmt::format(
          "ag::function '{}': input_signature has {} TensorSpec(s) but the function takes {} tensor(s) ({} ag::Tensor "
          "parameter(s){}); give one spec per ag::Tensor parameter and N for a std::array<ag::Tensor, N>, in order",
          info.name, options.input_signature.size(), specs, tensors,
          specs > tensors ? fmt::format(", {} in std::array parameters", specs - tensors) : std::string()));
  }
  return std::make_shared<FunctionCore>(std::move(options), std::move(info), std::move(params), num_outputs,
                                        std::move(tracer));
}

void call_function(FunctionCore& f, std::span<const ArgView> args, std::span<Tensor> outputs) { f.call(args, outputs); }
std::shared_ptr<ConcreteCore> get_concrete(FunctionCore& f, std::span<const ArgView> args) { return f.get_concrete(args); }
std::shared_ptr<ConcreteCore> get_concrete_from_input_signature(FunctionCore& f) {
  return f.get_concrete_from_input_signature();
}
int64_t tracing_count(const FunctionCore& f) { return f.tracing_count(); }
std::vector<std::shared_ptr<ConcreteCore>> concrete_functions(const FunctionCore& f) { return f.concrete_functions(); }
std::string pretty_printed_concrete_signatures(const FunctionCore& f) {
  std::string out;
  for (const auto& c : f.concrete_functions()) out += c->signature_str() + "\n";
  return out;
}
void evict(FunctionCore& f) { f.evict_all(); }
FunctionStats stats(const FunctionCore& f) { return f.stats(); }
const std::string& function_name(const FunctionCore& f) { return f.name(); }

void call_concrete(ConcreteCore& c, std::span<const ArgView> args, std::span<Tensor> outputs) {
  c.check_call(args);
  if (is_tracing()) {  // inside another trace: inline, like calling its Function
    std::shared_ptr<ConcreteCore> hold;
    inline_into_current_frame(c.bound_to(args, hold), args, outputs);
    return;
  }
  c.run(args, outputs);
}

std::string concrete_signature(const ConcreteCore& c) { return c.signature_str(); }
const Graph& concrete_graph(const ConcreteCore& c) { return c.graph(); }

std::string concrete_llvm_ir(ConcreteCore& c, bool optimized) {
  std::string ir = c.compiled_executable().llvm_ir(optimized);
  if (ir.empty())
    throw ValueError(fmt::format("{} runs on the graph interpreter (jit_compile=false or no JIT backend linked): it has "
                                 "no LLVM IR",
                                 c.signature_str()));
  return ir;
}

std::string concrete_assembly(ConcreteCore& c) {
  std::string s = c.compiled_executable().assembly();
  if (s.empty())
    throw ValueError(fmt::format("{} runs on the graph interpreter: it has no assembly", c.signature_str()));
  return s;
}

}  // namespace ag::detail
