// Warnings and AG_LOG logging (to stderr, or the sink set by ag::set_log_sink).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ag::detail {

enum class LogTopic : unsigned {
  Retrace = 1,  // AG_LOG=retrace: every (re)trace with its reason
  Compile = 2,  // AG_LOG=compile: every code generation / disk-cache hit with its time
  Trace = 4,    // AG_LOG=trace: trace statistics (ops, unrolled iterations)
  Passes = 8,   // AG_LOG=passes: graph size after each pass
  Kernels = 16, // AG_LOG=kernels: the library kernel of each convolution shape (first use), a
                // mid-size matmul's halves or whole (gemm_halves.h)
};

// True when AG_LOG names `topic` (comma-separated; "all" enables everything). An unknown
// word in AG_LOG is logged as a warning when AG_LOG is first read.
bool log_enabled(LogTopic topic);
// The LogTopic mask of an AG_LOG value; words that name no topic are appended to `unknown`.
unsigned parse_log_topics(std::string_view spec, std::vector<std::string>* unknown);
// Replaces what AG_LOG said (tests); a mask of LogTopic bits.
void set_log_topics(unsigned mask);
// The AG_DUMP directory ("" when not dumping); set_dump_dir replaces it (tests, tools).
const std::string& dump_dir();
void set_dump_dir(std::string dir);
// Sends one line (a newline is appended) to the log sink.
void log_line(std::string_view line);
// Sends one line to the print sink (ag::print's output).
void print_line(std::string_view line);

}  // namespace ag::detail
