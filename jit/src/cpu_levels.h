// The x86-64 levels that code is compiled for ahead of time (ag-aot, SaveOptions::compiled_for):
// the list is the runtime's (ag/detail/object_code.h); whether this CPU runs one is answered
// here, by the eager kernels' feature sets. No LLVM.
#pragma once

#include <string_view>

#include "ag/detail/object_code.h"

namespace ag::jit {

using ag::detail::is_cpu_level;

// Whether this CPU has every feature of `level`: the levels are those the eager kernels are
// built for, whose feature sets the runtime checks (kernel_set.h); a level this build has no
// kernels for counts as not fitting.
bool cpu_level_fits(std::string_view level);

}  // namespace ag::jit
