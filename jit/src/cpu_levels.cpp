// cpu_levels.h. No LLVM.
#include "cpu_levels.h"

#include "ag/detail/kernel_set.h"

namespace ag::jit {

bool cpu_level_fits(std::string_view level) {
  for (const ag::detail::KernelSet* set : ag::detail::built_kernel_sets())
    if (level == set->isa) return ag::detail::missing_cpu_features(*set).empty();
  return false;
}

}  // namespace ag::jit
