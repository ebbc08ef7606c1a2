// Must NOT compile: a container of Variables is not an ag::function parameter (a Function
// matches Variables by identity; each is its own ag::Variable& parameter). CASE picks the form;
// CASE 4 is a container that is no parameter type for another reason (strings); CASE 5 a random
// Generator (captured, not passed).
#include <ag/ag.h>

#include <functional>
#include <vector>

int main() {
#if CASE == 1
  auto f = ag::function([](const std::vector<ag::Variable>& vs) { return vs[0].value(); });
#elif CASE == 2
  auto f = ag::function([](std::vector<ag::Variable*> vs) { return vs[0]->value(); });
#elif CASE == 3
  auto f = ag::function([](std::vector<std::reference_wrapper<ag::Variable>> vs) { return vs[0].get().value(); });
#elif CASE == 5
  auto f = ag::function([](ag::random::Generator& g) { return g.uniform({2}); });
#else  // not a container of Variables, but not a parameter type either: the general message
  auto f = ag::function([](const std::vector<std::string>& names) { return ag::Tensor(int(names.size())); });
#endif
  (void)f;
  return 0;
}
