// Special values through every transcendental of the eager kernels (tests/common/special_values.h).
// ctest runs this binary once per kernel instruction-set level (AG_KERNEL_ISA), so each level's
// vector code is checked, not only the widest one of the machine the tests run on.
#include "../common/special_values.h"
#include "test_util.h"

namespace {

template <class T>
class EagerSpecialValues : public ::testing::Test {};
TYPED_TEST_SUITE(EagerSpecialValues, agtest::FloatTypes);

TYPED_TEST(EagerSpecialValues, EveryTranscendentalAgreesWithTheReference) {
  this->RecordProperty("kernel_isa", std::string(ag::kernel_isa()));
  agtest::special::check_all<TypeParam>(
      [](const agtest::special::Case& c, const ag::Tensor& x, const ag::Tensor& y) { return c.op(x, y); });
}

}  // namespace
