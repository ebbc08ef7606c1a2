// main() of the multi-process tests: joins the processes, runs the tests (every process runs
// every test: a test is its collectives, which they make together), and reports: the first
// process in full, the others their failures only.
#include <ag/distribute.h>
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ag::distribute::init();
  testing::InitGoogleTest(&argc, argv);
  if (ag::distribute::rank() != 0) GTEST_FLAG_SET(brief, true);
  const int rc = RUN_ALL_TESTS();
  ag::distribute::finalize();
  return rc;
}
