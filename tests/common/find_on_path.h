// The full path of an executable found on $PATH, or "" (the browser checks look for chromium).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>

namespace agtest {

inline std::string find_on_path(const char* name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  return {};
}

}  // namespace agtest
