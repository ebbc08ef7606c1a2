// Run by ctest with AG_LOG=retrace,compiel,time: the first read of AG_LOG warns on the log sink,
// naming the unknown word and the topics there are, and still enables the known ones; `time`
// is no unknown word, and starts the line with the milliseconds since the runtime was loaded.
#include <cstdio>
#include <string>
#include <vector>

#include "ag/ag.h"
#include "ag/detail/log.h"

int main() {
  std::vector<std::string> lines;
  ag::set_log_sink([&](std::string_view l) { lines.emplace_back(l); });
  const bool retrace = ag::detail::log_enabled(ag::detail::LogTopic::Retrace);
  const bool compile = ag::detail::log_enabled(ag::detail::LogTopic::Compile);
  ag::set_log_sink(nullptr);
  for (const std::string& l : lines) std::printf("%s", l.c_str());
  const bool ok = retrace && !compile && lines.size() == 1 &&
                  lines[0].find("AG_LOG: unknown topic 'compiel'") != std::string::npos &&
                  lines[0].find("retrace, compile, trace, passes, kernels and all") != std::string::npos &&
                  lines[0].rfind("[+", 0) == 0 && lines[0].find(" ms] agc: warning: AG_LOG") != std::string::npos;
  std::printf("%s\n", ok ? "OK" : "FAILED: expected one warning naming 'compiel', after a time prefix, and retrace enabled");
  return ok ? 0 : 1;
}
