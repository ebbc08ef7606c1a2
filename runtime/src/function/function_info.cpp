// Function names (from the rewriter's registry or the symbol table) and the eager switch.
#include <cxxabi.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <atomic>
#include <map>
#include <mutex>

#include "ag/detail/function_core.h"
#include "ag/function_options.h"

namespace ag {
namespace {

struct Registry {
  std::mutex mu;
  std::map<const void*, detail::FunctionInfo> infos;
};
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}
}  // namespace

void run_functions_eagerly(bool enable) { detail::g_run_functions_eagerly.store(enable); }

namespace detail {

bool register_function_info(const void* fn, const char* name, std::initializer_list<const char*> params) {
  FunctionInfo info{name, {}};
  for (const char* p : params) info.params.emplace_back(p);
  std::lock_guard lock(registry().mu);
  registry().infos[fn] = std::move(info);
  return true;
}

void check_param_names(const std::vector<std::string>& names, size_t arity, const std::string& function_name) {
  if (names.size() != arity)
    throw ValueError(fmt::format("ag::function '{}': FunctionOptions::param_names has {} name{} for {} parameter{}",
                                 function_name, names.size(), names.size() == 1 ? "" : "s", arity, arity == 1 ? "" : "s"));
}

FunctionInfo function_info_of(const void* fn, const char* file, unsigned line) {
  if (fn) {
    {
      std::lock_guard lock(registry().mu);
      auto it = registry().infos.find(fn);
      if (it != registry().infos.end()) return it->second;
    }
    Dl_info dl;
    if (dladdr(fn, &dl) && dl.dli_sname) {
      int status = 0;
      char* d = abi::__cxa_demangle(dl.dli_sname, nullptr, nullptr, &status);
      std::string name = status == 0 && d ? d : dl.dli_sname;
      std::free(d);
      if (auto paren = name.find('('); paren != std::string::npos) name.resize(paren);
      return {name, {}};
    }
  }
  std::string f = file ? file : "";
  if (auto slash = f.find_last_of('/'); slash != std::string::npos) f = f.substr(slash + 1);
  return {fmt::format("{}@{}:{}", fn ? "function" : "lambda", f, line), {}};
}

}  // namespace detail
}  // namespace ag
