// Debugging staged code (docs/debugging.md): a NaN found with its op, element and line; the
// compiled code compared value by value with the eager kernels; a C++ callback on every call of
// compiled code; what a concrete function costs; a profile written and its three costliest
// events printed.
#include <ag/ag.h>
#include <ag/profiler.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

using ag::Tensor;

// Gradient descent on log(x), whose derivative is 1/x. The step is too long: x[1] overshoots
// past 0 on the second step, and the third takes the log of a negative number.
AG_FUNCTION Tensor descend(Tensor x, Tensor rate, Tensor steps) {
  Tensor i = 0;
  Tensor loss = ag::zeros_like(x);
  while (i < steps) {
    loss = ag::log(x);
    x = x - rate / x;
    i += 1;
  }
  return x + loss * 0.f;
}

// The three events of a Chrome trace with the most time in total, by name.
std::vector<std::pair<double, std::string>> top_three(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  const std::string json = s.str();
  std::map<std::string, double> total;
  static const std::regex event(R"re("name": "((?:[^"\\]|\\.)*)", "cat": "[a-z]+", "ph": "X", "ts": [0-9.]+, "dur": ([0-9.]+))re");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), event); it != std::sregex_iterator(); ++it)
    total[(*it)[1]] += std::stod((*it)[2]);
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [name, us] : total) order.emplace_back(us, name);
  std::sort(order.rbegin(), order.rend());
  order.resize(std::min<size_t>(order.size(), 3));
  return order;
}

int main() {
  auto f = ag::function(descend);
  const Tensor x = ag::constant({4.f, 1.f}), rate = ag::constant(0.5f);

  // 1. Three steps give NaN, silently: where did it come from?
  fmt::print("descend(x, 0.5, 3) = {}\n", f(x, rate, Tensor(3)).str());
  ag::debugging::enable_check_numerics();
  try {
    f(x, rate, Tensor(3));
  } catch (const ag::InvalidArgumentError& e) {
    fmt::print("with checks: {}\n", e.what());
  }
  ag::debugging::disable_check_numerics();

  // 2. Every value of the compiled code against the eager kernels.
  fmt::print("{}\n", ag::debugging::compare_with_eager(f, x, rate, Tensor(2)).str());

  // 3. C++ on every call of compiled code: an io_callback that logs (never pruned, in order).
  auto logged = ag::function([](Tensor v) {
    (void)ag::io_callback(
        [](const Tensor& total) {
          fmt::print("io_callback: the sum is {}\n", total.item<float>());
          return ag::constant(0);
        },
        ag::TensorSpec({}, ag::int32), ag::reduce_sum(v));
    return v * 2.f;
  });
  logged(x);
  logged(x * 2.f);

  // 4. What one concrete function costs.
  const auto cf = f.get_concrete_function(ag::TensorSpec({1024}, ag::float32), ag::TensorSpec({}, ag::float32), Tensor(2));
  fmt::print("cost: {}", cf.cost_analysis().str(3));
  fmt::print("memory: {}\n", cf.memory_analysis().str());

  // 5. A profile of a few calls and eager ops, opened in Perfetto or chrome://tracing.
  const std::string path = (std::filesystem::temp_directory_path() / "agc_debugging_sample.trace.json").string();
  ag::profiler::start(path);
  const Tensor big = ag::random_uniform({1 << 16}, ag::float32, 1, 2, 7);
  for (int k = 0; k < 5; ++k) f(big, rate, Tensor(2));
  {
    ag::profiler::Trace span("eager steps");
    descend(big, rate, Tensor(2));
  }
  fmt::print("profile written to {}\n", ag::profiler::stop());
  fmt::print("its three costliest events:\n");
  for (const auto& [us, name] : top_three(path)) fmt::print("  {:10.1f} us  {}\n", us, name);
  return 0;
}
// OUT: descend(x, 0.5, 3) = tf.Tensor([{{[0-9.]+}} nan], shape=(2,), dtype=float32)
// OUT: with checks: check_numerics: ag::log produced NaN at element [1] of its float32[2] result (at {{.*}}debugging.cpp:25)
// OUT: compare_with_eager: compiled code agrees with the eager kernels on {{[0-9]+}} values
// OUT: io_callback: the sum is 5
// OUT-NEXT: io_callback: the sum is 10
// OUT: cost: {{.*}}flop ({{.*}} transcendental), {{.*}}B read, {{.*}}B written (before fusion); loop bodies counted once
// OUT: memory: arguments {{[0-9]+}} B, outputs 4096 B, constants {{[0-9]+}} B, temporaries {{[0-9]+}} B
// OUT: profile written to {{.*}}agc_debugging_sample.trace.json
// OUT: its three costliest events:
// OUT-NEXT: {{ +[0-9.]+ us  .+}}
