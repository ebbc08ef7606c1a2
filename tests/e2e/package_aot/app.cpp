// Links only the library ag_add_aot_library made: runs `scale` as machine code, without LLVM.
#include <ag/ag.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "scaler.h"

int main() {
  const ag::Tensor y = scaler::scale(ag::constant(std::vector<float>{1, 2, 3}));
  std::ifstream maps("/proc/self/maps");
  std::stringstream mapped;
  mapped << maps.rdbuf();
  const bool llvm = mapped.str().find("libLLVM") != std::string::npos;
  std::cout << "aot consumer: " << fmt::format("{}", y) << ", level " << scaler::selected_cpu("scale") << ", libLLVM loaded: "
            << (llvm ? "yes" : "no") << "\n";
  const std::vector<float> v = y.to_vector<float>();
  return v == std::vector<float>{4, 7, 10} && !llvm && scaler::selected_cpu("scale") == "x86-64-v2" ? 0 : 1;
}
