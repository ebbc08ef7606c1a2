// A program that links the runtime without the report library (agc::report): report_html is an
// UnimplementedError naming the library to link, and AG_REPORT (set by the test) writes nothing
// and breaks nothing. Exits 0 when it behaves so.
#include <cstdio>
#include <filesystem>
#include <string>

#include "ag/ag.h"

int main(int, char** argv) {
  auto f = ag::function([](ag::Tensor x) { return x * 2; }, {.jit_compile = false});
  const ag::Tensor y = f(ag::constant({1.0f, 2.0f}));
  if (y.to_vector<float>() != std::vector<float>{2.0f, 4.0f}) return 1;
  try {
    f.report_html("never.html");
    std::puts("report_html wrote a report without the report library");
    return 1;
  } catch (const ag::UnimplementedError& e) {
    if (std::string(e.what()).find("agc::report") == std::string::npos) {
      std::printf("the error does not name agc::report: %s\n", e.what());
      return 1;
    }
  }
  if (std::filesystem::exists("never.html")) return 1;
  (void)argv;
  return 0;
}
