// Special values through every transcendental in compiled code (tests/common/special_values.h).
// ctest runs the JIT tests once per code-generation level (AG_JIT_CPU), so the vector math of
// each level (libmvec's SSE, AVX2 or AVX-512 variants, the inline approximations) is checked.
#include "../common/special_values.h"
#include "jit_test_util.h"

namespace {

template <class T>
class JitSpecialValues : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(JitSpecialValues, FloatTypes);

TYPED_TEST(JitSpecialValues, EveryTranscendentalAgreesWithTheReference) {
  this->RecordProperty("jit_cpu", ag::jit_target_cpu());
  agtest::special::check_all<TypeParam>([](const agtest::special::Case& c, const ag::Tensor& x, const ag::Tensor& y) {
    auto f = ag::function([&c](ag::Tensor a, ag::Tensor b) { return c.op(a, b); }, {.jit_compile = true});
    ag::Tensor r = f(x, y);
    // The compiled code ran (not the interpreter).
    EXPECT_EQ(f.stats().compiles + f.stats().disk_hits, 1) << c.name;
    return r;
  });
}

}  // namespace
