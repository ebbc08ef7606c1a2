// Must NOT compile: a container of Variables is not an ag::function parameter (a Function
// matches Variables by dtype, shape and aliasing; each is its own ag::Variable& parameter). CASE picks the form;
// CASE 4 is a container that is no parameter type for another reason (strings); CASE 5 a random
// Generator (captured, not passed). CASES 6-9 are structs: a Variable pointer field, a struct
// taken by mutable reference, a struct result with a number field, ag::grad with respect to a
// struct with a number field.
#include <ag/ag.h>

#include <functional>
#include <vector>

struct WithVariable {
  ag::Tensor w;
  ag::Variable* v;
};
struct Tensors {
  ag::Tensor w, b;
};
struct WithNumber {
  ag::Tensor w;
  int n;
};

int main() {
#if CASE == 1
  auto f = ag::function([](const std::vector<ag::Variable>& vs) { return vs[0].value(); });
#elif CASE == 2
  auto f = ag::function([](std::vector<ag::Variable*> vs) { return vs[0]->value(); });
#elif CASE == 3
  auto f = ag::function([](std::vector<std::reference_wrapper<ag::Variable>> vs) { return vs[0].get().value(); });
#elif CASE == 5
  auto f = ag::function([](ag::random::Generator& g) { return g.uniform({2}); });
#elif CASE == 6
  auto f = ag::function([](const WithVariable& s) { return s.w; });
#elif CASE == 7
  auto f = ag::function([](Tensors& s) { return s.w; });
#elif CASE == 8
  auto f = ag::function([](ag::Tensor x) { return WithNumber{x, 1}; });
#elif CASE == 9
  auto f = ag::grad([](const WithNumber& s) { return ag::reduce_sum(s.w) * float(s.n); });
#else  // not a container of Variables, but not a parameter type either: the general message
  auto f = ag::function([](const std::vector<std::string>& names) { return ag::Tensor(int(names.size())); });
#endif
  (void)f;
  return 0;
}
