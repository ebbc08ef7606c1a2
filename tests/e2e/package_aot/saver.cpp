// Saves `scale`: y = x * w + 1 with a Variable w = 3 (any length of x).
#include <ag/ag.h>
#include <ag/saved_model.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  ag::Variable w(ag::Tensor(3.0f), "w");
  auto scale = ag::function([&](ag::Tensor x) { return x * w + 1.0f; }, {.name = "scale"});
  ag::saved_model::save(argv[1], {{"scale", scale.get_concrete_function(ag::TensorSpec({-1}, ag::float32))}});
  return 0;
}
