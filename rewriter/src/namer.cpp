// Generated names: deterministic counters that skip every identifier the user spelled.
#include "namer.h"

namespace ag::rewriter {

std::string Namer::numbered(const std::string& base) {
  for (;;) {
    std::string name = base + "_" + std::to_string(++counters_[base]);
    if (taken_.insert(name).second) return name;
  }
}

std::string Namer::plain(const std::string& base) {
  if (taken_.insert(base).second) return base;
  return numbered(base);
}

}  // namespace ag::rewriter
