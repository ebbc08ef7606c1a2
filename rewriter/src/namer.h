// Collision-free, deterministic names for generated variables (ag__break_1, ag__retval, ...).
#pragma once

#include <map>
#include <set>
#include <string>

namespace ag::rewriter {

class Namer {
 public:
  // `taken`: every identifier spelled in the function, which generated names must avoid.
  explicit Namer(std::set<std::string> taken) : taken_(std::move(taken)) {}

  // "<base>_<n>" with the next free n (counting per base, from 1), e.g. ag__break_1.
  std::string numbered(const std::string& base);
  // "<base>" if free, else the next free numbered form.
  std::string plain(const std::string& base);

 private:
  std::set<std::string> taken_;
  std::map<std::string, int> counters_;
};

}  // namespace ag::rewriter
