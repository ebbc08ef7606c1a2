// AG_REPORT=<dir> (run by ctest with it set): a Function destroyed in main writes its report
// then, one alive at exit writes it at exit, and one never traced writes none.
#include "ag/ag.h"

namespace {

ag::Tensor scale(ag::Tensor x) { return x * 3.f + 1.f; }

}  // namespace

int main() {
  static auto kept = ag::function(scale, {.name = "kept_to_exit"});
  kept(ag::ones({4}));
  kept(ag::ones({4}));
  {
    auto scaled = ag::function(scale, {.name = "scaled"});
    scaled(ag::ones({2}));
    scaled(ag::ones({3, 2}));
    auto never = ag::function(scale, {.name = "never_called"});
  }
  return 0;
}
