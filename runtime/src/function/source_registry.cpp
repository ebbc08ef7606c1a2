// register_source_file: the registry of rewritten copies (ag/detail/source_registry.h).
#include "ag/detail/source_registry.h"

#include <mutex>

#include "ag/detail/function_core.h"

namespace ag::detail {
namespace {

struct RewrittenCopies {
  std::mutex mu;
  std::map<std::string, std::string> by_original;  // original path -> rewritten copy
};
RewrittenCopies& copies() {
  static auto* c = new RewrittenCopies;  // registrations run during static initialization
  return *c;
}

}  // namespace

bool register_source_file(const char* original, const char* rewritten) {
  std::lock_guard lock(copies().mu);
  copies().by_original[original ? original : ""] = rewritten ? rewritten : "";
  return true;
}

std::map<std::string, std::string> registered_source_files() {
  std::lock_guard lock(copies().mu);
  return copies().by_original;
}

}  // namespace ag::detail
