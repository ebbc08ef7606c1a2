// calls_context_helpers (object_helpers.h): the objects' undefined symbols against the helpers
// of rt_helpers.def that take the call's context.
#include "object_helpers.h"

#include <llvm/Object/ObjectFile.h>

#include <algorithm>
#include <initializer_list>
#include <set>

#include "rt_helper_types.h"

namespace ag::jit {
namespace {

const std::set<std::string_view>& context_helpers() {
  static const std::set<std::string_view> names = [] {
    using enum RtType;
    std::set<std::string_view> out;
    auto add = [&](std::string_view name, std::initializer_list<RtType> params) {
      if (std::find(params.begin(), params.end(), Ctx) != params.end()) out.insert(name);
    };
#define AG_RT_HELPER(Name, Result, Params, Pure, Address) add(#Name, {AG_RT_UNPAREN Params});
#include "rt_helpers.def"
    return out;
  }();
  return names;
}

// Whether `object` has an undefined symbol that is a context helper; true when it cannot be read.
bool calls_context_helper(std::string_view object) {
  auto file = llvm::object::ObjectFile::createObjectFile(llvm::MemoryBufferRef(llvm::StringRef(object.data(), object.size()), ""));
  if (!file) {
    llvm::consumeError(file.takeError());
    return true;
  }
  for (const llvm::object::SymbolRef& sym : (*file)->symbols()) {
    llvm::Expected<uint32_t> flags = sym.getFlags();
    if (!flags) {
      llvm::consumeError(flags.takeError());
      return true;
    }
    if (!(*flags & llvm::object::SymbolRef::SF_Undefined)) continue;
    llvm::Expected<llvm::StringRef> name = sym.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      return true;
    }
    if (context_helpers().count(std::string_view(name->data(), name->size()))) return true;
  }
  return false;
}

}  // namespace

bool calls_context_helpers(const std::vector<std::string_view>& objects) {
  return std::any_of(objects.begin(), objects.end(), calls_context_helper);
}

}  // namespace ag::jit
