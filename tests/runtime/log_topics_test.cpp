// AG_LOG parsing: the topics, and the words that name none (log_env_check.cpp checks that such
// a word in the environment is a warning: a misspelled topic is not silently ignored).
#include "test_util.h"

namespace {

using ag::detail::LogTopic;

TEST(LogTopics, WordsSelectTopicsAndUnknownWordsAreReported) {
  std::vector<std::string> unknown;
  const unsigned mask = ag::detail::parse_log_topics("retrace,compiel,,passes,trace ", &unknown);
  EXPECT_EQ(mask, static_cast<unsigned>(LogTopic::Retrace) | static_cast<unsigned>(LogTopic::Passes));
  EXPECT_EQ(unknown, (std::vector<std::string>{"compiel", "trace "}));
  unknown.clear();
  EXPECT_EQ(ag::detail::parse_log_topics("all", &unknown), ~0u);
  EXPECT_TRUE(unknown.empty());
}

}  // namespace
