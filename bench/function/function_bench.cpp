// Function overheads on the graph interpreter: the cached-call path next to a direct C++ call,
// and the time to trace + optimize the seed-size functions.
#include <ag/ag.h>

#include "../common/bench_util.h"

using ag::Tensor;
using agbench::Row;

namespace {

#define LOC(line) AG_SOURCE_LOC("bench.cpp", line)

Tensor trivial(Tensor x) { return x; }

__attribute__((noinline)) Tensor direct(const Tensor& x) { return x; }

Tensor collatz(Tensor n) {
  Tensor steps = 0;
  ag::while_stmt([&] { return n > 1; },
                 [&] {
                   ag::if_stmt(n % 2 == 0, [&] { n = n / 2; }, [&] { n = 3 * n + 1; }, ag::state(n), {"n"}, LOC(2));
                   steps += 1;
                 },
                 ag::state(n, steps), {"n", "steps"}, LOC(1));
  return steps;
}

Tensor conditional(Tensor x) {
  Tensor y;
  ag::if_stmt(ag::reduce_sum(x) > 0, [&] { y = ag::abs(x); }, [&] { y = ag::square(x); }, ag::state(y), {"y"}, LOC(3));
  return y;
}

void fizzbuzz(Tensor n) {
  ag::for_stmt(ag::range(1, n + 1), ag::no_extra_test,
               [&](Tensor i) {
                 ag::if_stmt(i % 15 == 0, [&] { ag::print("fizzbuzz"); },
                             [&] {
                               ag::if_stmt(i % 3 == 0, [&] { ag::print("fizz"); },
                                           [&] {
                                             ag::if_stmt(i % 5 == 0, [&] { ag::print("buzz"); }, [&] { ag::print(i); },
                                                         ag::state(), {}, LOC(7));
                                           },
                                           ag::state(), {}, LOC(6));
                             },
                             ag::state(), {}, LOC(5));
               },
               ag::state(), {}, LOC(4));
}

Tensor dense(Tensor x, Tensor w, Tensor b) { return ag::relu(ag::matmul(x, w) + b); }

// Seconds to trace and optimize a fresh Function (get_concrete_function: no run).
template <class Make>
double trace_time(Make make) {
  return agbench::time_per_call([&] { make(); }, 0.2, 3);
}

// A struct argument (a pytree of two tensors).
struct Pair {
  Tensor a, b;
};

}  // namespace

int main() {
  ag::set_print_sink([](std::string_view) {});
  std::vector<Row> rows;

  auto f = ag::function(trivial, {.jit_compile = false});
  Tensor one = ag::constant({1.f});
  f(one);
  const double cached = agbench::time_per_call([&] { agbench::keep(f(one)); });
  const double base = agbench::time_per_call([&] { agbench::keep(direct(one)); });
  rows.push_back({"cached call, trivial fn, 1-element tensor", agbench::ns(cached), agbench::ns(base) + " direct call",
                  fmt::format("+{:.0f} ns", (cached - base) * 1e9), "interpreter backend"});

  auto add = ag::function([](Tensor a, Tensor b) { return a + b; }, {.jit_compile = false});
  add(one, one);
  const double add_cached = agbench::time_per_call([&] { agbench::keep(add(one, one)); });
  const double add_eager = agbench::time_per_call([&] { agbench::keep(one + one); });
  rows.push_back({"cached call, a + b, 1-element tensors", agbench::ns(add_cached), agbench::ns(add_eager) + " eager a+b",
                  fmt::format("{:.2f}x", add_cached / add_eager), "interpreter backend"});

  // The same sum with the two tensors in a std::vector<ag::Tensor> (a container argument: a list
  // header and one entry per element in the key, one graph parameter per element).
  auto add_list = ag::function([](const std::vector<Tensor>& ab) { return ab[0] + ab[1]; }, {.jit_compile = false});
  const std::vector<Tensor> pair = {one, one};
  add_list(pair);
  const double list_cached = agbench::time_per_call([&] { agbench::keep(add_list(pair)); });
  rows.push_back({"cached call, a + b, vector<Tensor>{a, b}", agbench::ns(list_cached),
                  agbench::ns(add_cached) + " two Tensors", fmt::format("{:.2f}x", list_cached / add_cached),
                  "interpreter backend"});

  // The same sum with the two tensors as a struct's fields (flattened at compile time into one
  // view per field: the key is the two tensors' words, as for two parameters).
  auto add_struct = ag::function([](const Pair& ab) { return ab.a + ab.b; }, {.jit_compile = false});
  const Pair two{one, one};
  add_struct(two);
  const double struct_cached = agbench::time_per_call([&] { agbench::keep(add_struct(two)); });
  rows.push_back({"cached call, a + b, struct Pair{a, b}", agbench::ns(struct_cached),
                  agbench::ns(add_cached) + " two Tensors", fmt::format("{:.2f}x", struct_cached / add_cached),
                  "interpreter backend"});

  const ag::TensorSpec scalar_i32({}, ag::int32);
  rows.push_back({"trace+optimize collatz (while + if)",
                  agbench::us(trace_time([&] { ag::function(collatz, {.jit_compile = false}).get_concrete_function(scalar_i32); })),
                  "", "", ""});
  rows.push_back({"trace+optimize conditional (if)",
                  agbench::us(trace_time([&] {
                    ag::function(conditional, {.jit_compile = false}).get_concrete_function(ag::TensorSpec({-1}, ag::float32));
                  })),
                  "", "", ""});
  rows.push_back({"trace+optimize fizzbuzz (for + 3 ifs + prints)",
                  agbench::us(trace_time([&] { ag::function(fizzbuzz, {.jit_compile = false}).get_concrete_function(scalar_i32); })),
                  "", "", ""});
  rows.push_back({"trace+optimize dense layer (matmul+add+relu)",
                  agbench::us(trace_time([&] {
                    ag::function(dense, {.jit_compile = false})
                        .get_concrete_function(ag::TensorSpec({-1, 8}, ag::float32), ag::TensorSpec({8, 8}, ag::float32),
                                               ag::TensorSpec({8}, ag::float32));
                  })),
                  "", "", ""});
  agbench::print_table("agc Function overheads (graph interpreter)", rows);
  return 0;
}
