// The non-template core of ag::Function and ag::ConcreteFunction: signatures, the cache,
// tracing, compilation and calls. The templates in function.h only convert arguments.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ag/analysis.h"
#include "ag/detail/arg_view.h"
#include "ag/function_options.h"
#include "ag/graph/graph.h"

namespace ag::detail {

class FunctionCore;
class ConcreteCore;

// Runs the user's function with placeholders for its tensor parameters (in order, one per
// element of a container of tensors) and the other arguments from `args`; returns the outputs.
using Tracer = std::function<std::vector<Tensor>(std::span<const ArgView> args, std::span<const Tensor> placeholders)>;

// The name and parameter names of a traced function, for signatures, logs and dumps.
// A struct parameter is flattened into one argument per leaf field (struct_params.h): then
// `params` names the arguments ("params.w1") and `arg_params` gives each one's parameter index
// (what messages call "argument 0"); empty: argument i is parameter i.
struct FunctionInfo {
  std::string name;
  std::vector<std::string> params;
  std::vector<uint32_t> arg_params = {};
};

// The parameter argument `arg` of a call belongs to (its index in messages).
inline size_t param_of_arg(const std::vector<uint32_t>* arg_params, size_t arg) {
  return arg_params && arg < arg_params->size() ? (*arg_params)[arg] : arg;
}

// How a parameter takes tensors, which says how many TensorSpecs of an input_signature it takes:
// one for an ag::Tensor, N for a std::array<ag::Tensor, N>; a std::vector<ag::Tensor> has no
// fixed count, so a Function with one cannot have an input_signature.
struct ParamLayout {
  enum class Kind : uint8_t { Other, Tensor, TensorArray, TensorVector };
  Kind kind = Kind::Other;
  size_t size = 0;  // TensorArray: N
};

// params: one layout per parameter, in order.
std::shared_ptr<FunctionCore> make_function_core(FunctionOptions options, FunctionInfo info,
                                                 std::vector<ParamLayout> params, size_t num_outputs, Tracer tracer);

// The hot path: finds (or traces) the concrete function for `args` and runs it.
void call_function(FunctionCore& f, std::span<const ArgView> args, std::span<Tensor> outputs);
// The same for a Function whose parameters are one to kMaxTensorCallArgs ag::Tensor (each T is
// Tensor), given by address in registers: no ArgView is built, and a cached call goes from the
// inline cache's check straight to the compiled code. `outputs` must be empty tensors (results
// are constructed in them). Instantiated for these counts only.
inline constexpr size_t kMaxTensorCallArgs = 3;
template <class... T>
void call_tensor_function(FunctionCore& f, std::span<Tensor> outputs, const T*... args);
extern template void call_tensor_function<Tensor>(FunctionCore&, std::span<Tensor>, const Tensor*);
extern template void call_tensor_function<Tensor, Tensor>(FunctionCore&, std::span<Tensor>, const Tensor*, const Tensor*);
extern template void call_tensor_function<Tensor, Tensor, Tensor>(FunctionCore&, std::span<Tensor>, const Tensor*,
                                                                  const Tensor*, const Tensor*);
std::shared_ptr<ConcreteCore> get_concrete(FunctionCore& f, std::span<const ArgView> args);
std::shared_ptr<ConcreteCore> get_concrete_from_input_signature(FunctionCore& f);
int64_t tracing_count(const FunctionCore& f);
std::vector<std::shared_ptr<ConcreteCore>> concrete_functions(const FunctionCore& f);
std::string pretty_printed_concrete_signatures(const FunctionCore& f);
void evict(FunctionCore& f);
FunctionStats stats(const FunctionCore& f);
const std::string& function_name(const FunctionCore& f);

// Checks `args` against the concrete function's own signature, then runs it.
void call_concrete(ConcreteCore& c, std::span<const ArgView> args, std::span<Tensor> outputs);
std::string concrete_signature(const ConcreteCore& c);
const Graph& concrete_graph(const ConcreteCore& c);
std::string concrete_llvm_ir(ConcreteCore& c, bool optimized);
CostAnalysis concrete_cost_analysis(const ConcreteCore& c);
MemoryAnalysis concrete_memory_analysis(ConcreteCore& c);
std::string concrete_assembly(ConcreteCore& c);

// The one-page HTML inspection report (docs/inspection.md, "The HTML report"): of a Function,
// every concrete function it holds; of a ConcreteFunction, that one. Compiles what is not
// compiled yet. An unwritable path is an ag::Error naming it.
void write_function_report(FunctionCore& f, const std::string& path);
void write_concrete_report(ConcreteCore& c, const std::string& path);

// Names the rewriter records for AG_FUNCTION free functions (their parameters' names), so
// signatures and retrace logs can say 'x' instead of "arg 0". Returns true (for static init).
bool register_function_info(const void* fn, const char* name, std::initializer_list<const char*> params);
// Recorded by ag-rewrite -o at the end of each file it converts: where the rewritten copy of
// `original` is, so the HTML report can show it beside the original ("": no copy, but where the
// original is, for a program whose __FILE__ paths are relative). Returns true.
bool register_source_file(const char* original, const char* rewritten);
// The recorded info of a function pointer; else its symbol name; else "<lambda at file:line>".
FunctionInfo function_info_of(const void* fn, const char* file, unsigned line);

}  // namespace ag::detail
