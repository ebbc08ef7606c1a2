// The rewritten copies ag-rewrite -o registered (register_source_file, ag/detail/function_core.h):
// every program built through ag_rewrite_sources registers them, whether or not it links the
// report that shows them (agc::report).
#pragma once

#include <map>
#include <string>

namespace ag::detail {

// original path -> its rewritten copy ("" when none), as registered so far.
std::map<std::string, std::string> registered_source_files();

}  // namespace ag::detail
