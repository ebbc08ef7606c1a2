// The inline cache's check for Functions of Tensor parameters only (signature.h,
// tensors_have_key) must answer exactly as the general check (call_has_key) and as
// comparing the keys build_key makes, for every pair of argument lists: dtypes, ranks (0 to 3),
// each dim, argument counts, and tensors without a value.
#include <vector>

#include "function/signature.h"
#include "test_util.h"

namespace {

using ag::Tensor;
using ag::detail::ArgView;

std::vector<ArgView> views_of(const std::vector<Tensor>& ts) {
  std::vector<ArgView> v(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) v[i].ptr = &ts[i];  // kind Tensor by default
  return v;
}

TEST(SignatureKey, TensorArgsCheckAgreesWithTheGeneralCheckAndTheKeys) {
  const std::vector<Tensor> pool = {
      ag::constant(1.0f),          ag::constant(1),         ag::constant(1.0),       ag::ones({3}),
      ag::ones({4}),               ag::ones({3}, ag::int32), ag::ones({2, 3}),       ag::ones({3, 2}),
      ag::ones({2, 3}, ag::int64), ag::ones({1, 2, 3}),     ag::ones({2, 2, 3}),     ag::ones({0}),
  };
  std::vector<std::vector<Tensor>> lists = {{}};
  for (const Tensor& a : pool) {
    lists.push_back({a});
    for (const Tensor& b : pool) lists.push_back({a, b});
  }
  lists.push_back({Tensor()});
  lists.push_back({pool[3], Tensor()});
  const ag::detail::SignatureRules rules;
  int compared = 0, equal = 0;
  for (const auto& stored : lists) {
    if (stored.size() == 1 && !stored[0].has_value()) continue;  // no key: build_key throws
    if (stored.size() == 2 && !stored[1].has_value()) continue;
    const std::vector<ArgView> sv = views_of(stored);
    ag::detail::KeyBuf key;
    ag::detail::build_key(sv, rules, key);
    for (const auto& call : lists) {
      const std::vector<ArgView> cv = views_of(call);
      const bool fast = ag::detail::tensors_have_key(
          call.size(), [&](size_t k) -> const Tensor& { return call[k]; }, key.data(), key.size());
      ASSERT_EQ(fast, ag::detail::call_has_key(cv, key.data(), key.size()))
          << stored.size() << " stored, " << call.size() << " called";
      bool same = stored.size() == call.size();
      for (size_t i = 0; same && i < call.size(); ++i)
        same = call[i].has_value() && call[i].dtype() == stored[i].dtype() && call[i].shape() == stored[i].shape();
      ASSERT_EQ(fast, same);
      ++compared;
      equal += same;
    }
  }
  EXPECT_EQ(equal, static_cast<int>(lists.size()) - 2);  // each list with values matches itself only
  EXPECT_GT(compared, 20000);
}

}  // namespace
