// Helper process for the saved-model tests: a program that never saw the model's source loads
// argv[1], runs signature argv[2] on a float32 [1, n] input of the values argv[3...], and prints
// the outputs (shortest round-trip decimals) after "outputs:".
#include <ag/ag.h>
#include <ag/saved_model.h>
#include <fmt/format.h>

#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  try {
    const ag::saved_model::Module m = ag::saved_model::load(argv[1]);
    std::vector<float> values;
    for (int i = 3; i < argc; ++i) values.push_back(std::strtof(argv[i], nullptr));
    const int64_t n = static_cast<int64_t>(values.size());
    const std::vector<ag::Tensor> out = m.call(argv[2], {ag::constant(values, {1, n})});
    fmt::print("outputs:");
    for (const ag::Tensor& t : out)
      for (double v : t.to_vector<double>()) fmt::print(" {}", static_cast<float>(v));
    fmt::print("\n");
  } catch (const ag::Error& e) {
    fmt::print("error: {}\n", e.what());
    return 1;
  }
  return 0;
}
