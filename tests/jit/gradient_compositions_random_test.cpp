// The composing gradient generator: each seeded random program (random_program.h) is
// differentiated in one of 144 compositions — the tape inside the trace, inside a staged branch,
// inside a staged loop body, or outside a Function call; the loss computed directly, through one
// Function or through two nested ones; the second source a plain input, the same tensor passed
// for two parameters, a Variable that scales the input, or a watched captured constant; first
// order, second order by nested tapes, or second order by ag::grad(ag::grad(...)). Every
// composition runs eagerly (run_functions_eagerly), on the interpreter and compiled, and must
// agree; float64 programs are also checked against central finite differences (first order: of
// the loss; second order: of the eager first-order gradient along a direction u).
//
// AG_GRADIENT_COMPOSITIONS=<n> runs n programs (./test.sh: 96; the long mode 20000 or more);
// AG_GRADIENT_COMPOSITION=k,place,nest,second,order runs one (the enums' values, in order). The
// canary test makes one rule wrong and checks the generator catches it.
#include <cstdlib>
#include <memory>

#include "ag/detail/tape.h"
#include "finite_differences.h"
#include "jit_test_util.h"
#include "random_program.h"

namespace {

using ag::Tensor;
using agtest::Dims;
using agtest::Program;

enum class Placement { InsideTrace, InsideBranch, InsideLoopBody, OutsideTheCall };
enum class Nesting { None, OneFunction, TwoFunctions };
enum class Second { Input, RepeatedTensor, Variable, CapturedConstant };
enum class Order { First, NestedTapes, GradOfGrad };

struct Composition {
  Placement place;
  Nesting nest;
  Second second;
  Order order;

  // Program k walks every composition (4 x 3 x 4 x 3 = 144), with a different program each time.
  static Composition of(int k) {
    return {static_cast<Placement>(k % 4), static_cast<Nesting>(k / 4 % 3), static_cast<Second>(k / 12 % 4),
            static_cast<Order>(k / 48 % 3)};
  }
  std::string str() const {
    static const char* const places[] = {"tape inside the trace", "tape inside a staged branch",
                                         "tape inside a staged loop body", "tape outside the Function call"};
    static const char* const nests[] = {"direct", "through a Function", "through two nested Functions"};
    static const char* const seconds[] = {"and the second input", "and a tensor passed twice", "and a Variable",
                                          "and a captured constant"};
    static const char* const orders[] = {"first order", "second order by nested tapes", "second order by grad(grad)"};
    return fmt::format("{}, {}, {} {}", places[static_cast<int>(place)], nests[static_cast<int>(nest)], orders[static_cast<int>(order)],
                       seconds[static_cast<int>(second)]);
  }
};

using LossFn = ag::Function<Tensor(Tensor, Tensor, Tensor)>;
using Grads = std::tuple<Tensor, Tensor>;

// One program in one composition. x: the float [M, K] input; x2: a second [M, K] input (the
// same tensor as x when the composition repeats it); y: the float [K] input; n: the integers.
class ComposedCase {
 public:
  explicit ComposedCase(int k, Dims dims = {}) : ComposedCase(k, Composition::of(k), dims) {}
  // `in_float64`: the same program and values in float64 (the judge of a float32 mismatch).
  ComposedCase(int k, Composition composition, Dims dims = {}, bool in_float64 = false)
      : k_(k), c_(composition), program_(static_cast<uint64_t>(k) * 2654435761u + 11, dims.rows, dims.cols) {
    const agtest::Mix mix = agtest::mix_of(k, dims);
    fdt = in_float64 ? ag::float64 : mix.fdt;
    const uint64_t s = static_cast<uint64_t>(k) * 13 + 5;
    // Moved off the exact kinks the samples hold (0, -0): at a kink, ties of maximum/minimum
    // between different expressions give a gradient (TensorFlow's choice) that no finite
    // difference reproduces (max(2b, b) - max(b, 2b) is 0, its gradient at 0 is 1). The
    // Gradients suite checks the kinks themselves, first order.
    auto off_kinks = [&](const Tensor& t) { return t + 0.0314159; };
    x = off_kinks(agtest::sample(fdt, {dims.rows, dims.cols}, s, agtest::Values::Moderate));
    x2 = c_.second == Second::RepeatedTensor ? x : off_kinks(agtest::sample(fdt, {dims.rows, dims.cols}, s + 1, agtest::Values::Moderate));
    y = off_kinks(agtest::sample(fdt, {dims.cols}, s + 2, agtest::Values::Moderate));
    n = agtest::sample(mix.idt, {dims.rows, dims.cols}, s + 3, agtest::Values::Moderate);
    w_ = agtest::sample(fdt, {3, dims.rows, dims.cols}, s + 4, agtest::Values::Moderate);
    u_ = agtest::sample(fdt, {dims.rows, dims.cols}, s + 5, agtest::Values::Moderate);
    captured_ = agtest::sample(fdt, {dims.cols}, s + 6, agtest::Values::Moderate) * 0.25;
    v_ = std::make_shared<ag::Variable>(agtest::sample(fdt, {dims.cols}, s + 7, agtest::Values::Moderate) * 0.25 + 1.0, "v");
  }

  const Composition& composition() const { return c_; }
  int index() const { return k_; }
  std::string what() const { return fmt::format("gradient composition {} ({}, {})", k_, ag::dtype_name(fdt), c_.str()); }

  // The gradients as the composition computes them, with its Functions compiled or not (the
  // eager run: run_functions_eagerly).
  Grads grads(bool jit, const Tensor& a, const Tensor& a2, const Tensor& b, const Tensor& m) const {
    const Backend f = backend(jit);
    switch (c_.place) {
      case Placement::InsideTrace:
      case Placement::OutsideTheCall: return compute(f, a, a2, b, m);
      case Placement::InsideBranch: {
        Tensor g0 = ag::zeros_like(a), g1 = ag::zeros_like(second_value(a2, b));
        ag::if_stmt(ag::reduce_sum(ag::abs(m)) >= 0, [&] { std::tie(g0, g1) = compute(f, a, a2, b, m); }, [&] {},
                    ag::state(g0, g1), {"g0", "g1"}, AG_SOURCE_LOC("compositions.cpp", 1));
        return {g0, g1};
      }
      case Placement::InsideLoopBody: {
        Tensor g0 = ag::zeros_like(a), g1 = ag::zeros_like(second_value(a2, b)), i = 0;
        ag::while_stmt([&] { return i < 1; },
                       [&] {
                         std::tie(g0, g1) = compute(f, a, a2, b, m);
                         i += 1;
                       },
                       ag::state(g0, g1, i), {"g0", "g1", "i"}, AG_SOURCE_LOC("compositions.cpp", 7));
        return {g0, g1};
      }
    }
    return {};
  }

  // What the gradients are of, in float64, eagerly: the loss (first order) or the first-order
  // gradient along u (second order), at the inputs with the given values.
  double objective(const Tensor& a, const Tensor& a2, const Tensor& b) const {
    if (c_.order == Order::First) return loss(a, a2, b, n).item<double>();
    ag::GradientTape tape;
    tape.watch(a);
    const Tensor g = tape.gradient(loss(a, a2, b, n), a, ag::UnconnectedGradients::zero);
    return ag::reduce_sum(g * ag::cast(u_, g.dtype())).item<double>();
  }

  // Moves element e of the second source by delta (for finite differences); returns the undo.
  std::function<void()> move_second(size_t e, double delta, Tensor& a2, Tensor& b) const {
    auto moved = [&](const Tensor& t) {
      std::vector<double> v = t.to_vector<double>();
      v[e] += delta;
      return ag::constant(v, t.shape());
    };
    switch (second_kind()) {
      case Second::Input: b = moved(b); return [] {};
      case Second::RepeatedTensor: a2 = moved(a2); return [] {};
      case Second::Variable: {
        const Tensor old = v_->value();
        v_->assign(moved(old));
        return [this, old] { v_->assign(old); };
      }
      case Second::CapturedConstant: {
        const Tensor old = captured_;
        captured_ = moved(old);
        return [this, old] { captured_ = old; };
      }
    }
    return [] {};
  }
  int64_t second_size() const { return second_value(x2, y).num_elements(); }

  ag::DType fdt;
  Tensor x, x2, y, n;

 private:
  // The Functions a backend calls: the loss's nested parts, ag::grad's, and the loss itself
  // (called under an eager tape when the tape is outside the call).
  struct Backend {
    bool jit = true;
    std::shared_ptr<LossFn> inner, outer;  // nesting: base through one or two Functions
    std::shared_ptr<ag::Function<Tensor(Tensor, Tensor, Tensor, Tensor)>> whole;  // the loss, for OutsideTheCall
  };

  // The second source's value for the gradient (shape of its gradient).
  Tensor second_value(const Tensor& a2, const Tensor& b) const {
    switch (second_kind()) {
      case Second::Input: return b;
      case Second::RepeatedTensor: return a2;
      case Second::Variable: return v_->value();
      case Second::CapturedConstant: return captured_;
    }
    return {};
  }
  // ag::grad differentiates parameters only: there a Variable or a constant becomes the input.
  Second second_kind() const {
    if (c_.order == Order::GradOfGrad && (c_.second == Second::Variable || c_.second == Second::CapturedConstant))
      return Second::Input;
    return c_.second;
  }
  ag::GradSource second_source(const Tensor& a2, const Tensor& b) const {
    switch (second_kind()) {
      case Second::Input: return b;
      case Second::RepeatedTensor: return a2;
      case Second::Variable: return *v_;
      case Second::CapturedConstant: return captured_;
    }
    return b;
  }

  Tensor base(const Tensor& xin, const Tensor& b, const Tensor& m) const {
    return ag::reduce_sum(program_.run(xin, b, m) * ag::cast(w_, xin.dtype()));
  }
  // The loss: the program on x (scaled by the Variable, or moved by the constant), plus a term
  // in x2 (the same tensor as x when repeated).
  Tensor loss(const Tensor& a, const Tensor& a2, const Tensor& b, const Tensor& m, const Backend* f = nullptr) const {
    Tensor xin = a;
    if (c_.second == Second::Variable) xin = a * v_->value();
    if (c_.second == Second::CapturedConstant) xin = a + captured_;
    const Tensor main = !f || !f->inner ? base(xin, b, m) : f->outer ? (*f->outer)(xin, b, m) : (*f->inner)(xin, b, m);
    Tensor extra = 0.5 * ag::reduce_sum(ag::tanh(a2) * a2);
    if (c_.second == Second::CapturedConstant) {
      // The constant also read inside a staged loop (a constant of the loop's body, eagerly a
      // plain loop): its gradient must come out of the loop.
      Tensor t = ag::zeros_like(captured_), i = 1;
      const Tensor trips = ag::cast(ag::reduce_max(m) % 3, ag::int32) + 1;
      ag::while_stmt([&] { return i <= trips; },
                     [&] {
                       t = t + ag::sin(captured_ * ag::cast(i, captured_.dtype()));
                       i += 1;
                     },
                     ag::state(t, i), {"t", "i"}, AG_SOURCE_LOC("compositions.cpp", 20));
      extra = extra + ag::reduce_sum(t) * 0.1;
    }
    return main + extra;
  }

  Backend backend(bool jit) const {
    Backend f;
    f.jit = jit;
    const ag::FunctionOptions options{.jit_compile = jit};
    if (c_.nest != Nesting::None) {
      f.inner = std::make_shared<LossFn>(ag::function([this](Tensor xin, Tensor b, Tensor m) { return base(xin, b, m); }, options));
      if (c_.nest == Nesting::TwoFunctions) {
        auto inner = f.inner;
        f.outer = std::make_shared<LossFn>(ag::function([inner](Tensor xin, Tensor b, Tensor m) { return (*inner)(xin, b, m) * 1.0; }, options));
      }
    }
    if (c_.place == Placement::OutsideTheCall) {
      const Backend parts = f;
      f.whole = std::make_shared<ag::Function<Tensor(Tensor, Tensor, Tensor, Tensor)>>(ag::function(
          [this, parts](Tensor a, Tensor a2, Tensor b, Tensor m) { return loss(a, a2, b, m, &parts); }, options));
    }
    return f;
  }

  Tensor loss_of(const Backend& f, const Tensor& a, const Tensor& a2, const Tensor& b, const Tensor& m) const {
    return f.whole ? (*f.whole)(a, a2, b, m) : loss(a, a2, b, m, &f);
  }

  Grads compute(const Backend& f, const Tensor& a, const Tensor& a2, const Tensor& b, const Tensor& m) const {
    const ag::GradSource s1 = second_source(a2, b);
    auto watch = [&](ag::GradientTape& tape) {
      tape.watch(a);
      if (!s1.variable()) tape.watch(s1.tensor());
    };
    switch (c_.order) {
      case Order::First: {
        ag::GradientTape tape;
        watch(tape);
        const std::vector<Tensor> g = tape.gradient(loss_of(f, a, a2, b, m), {a, s1}, ag::UnconnectedGradients::zero);
        return {g[0], g[1]};
      }
      case Order::NestedTapes: {
        ag::GradientTape outer;
        watch(outer);
        Tensor g;
        {
          ag::GradientTape inner;
          watch(inner);
          g = inner.gradient(loss_of(f, a, a2, b, m), a, ag::UnconnectedGradients::zero);
        }
        const std::vector<Tensor> h = outer.gradient(ag::reduce_sum(g * ag::cast(u_, g.dtype())), {a, s1}, ag::UnconnectedGradients::zero);
        return {h[0], h[1]};
      }
      case Order::GradOfGrad: {
        auto l = [this, f](Tensor p, Tensor p2, Tensor q, Tensor r) { return loss_of(f, p, p2, q, r); };
        const ag::FunctionOptions options{.jit_compile = f.jit};
        auto g1 = ag::grad(l, options);  // d/dx, a Function
        auto u = u_;
        auto h = [g1, u](Tensor p, Tensor p2, Tensor q, Tensor r) { return ag::reduce_sum(g1(p, p2, q, r) * ag::cast(u, p.dtype())); };
        if (second_kind() == Second::RepeatedTensor) return ag::grad(h, ag::argnums<0, 1>, options)(a, a2, b, m);
        return ag::grad(h, ag::argnums<0, 2>, options)(a, a2, b, m);
      }
    }
    return {};
  }

  int k_;
  Composition c_;
  Program program_;
  Tensor w_, u_;
  mutable Tensor captured_;
  std::shared_ptr<ag::Variable> v_;
};

// The mismatches of one composed program (empty: it passed).
std::vector<std::string> check_once(const ComposedCase& c, bool finite_differences) {
  std::vector<std::string> found;
  auto compare = [&](const Grads& expected, const Grads& got, const char* backend) {
    const agtest::Tol tol{.rtol = 1e-3, .atol = 1e-4};
    for (const auto& [e, g, i] : {std::tuple{std::get<0>(expected), std::get<0>(got), 0}, std::tuple{std::get<1>(expected), std::get<1>(got), 1}})
      if (auto r = agtest::same_tensor(e, g, tol); !r) found.push_back(fmt::format("{} [{}] output {}: {}", c.what(), backend, i, r.message()));
  };
  try {
    // The eager reference: a tape told the same tensor twice gives both its whole gradient (a
    // traced Function's parameters are two sources), so tapes get two tensors of equal values;
    // ag::grad gets the same tensor twice, and must give each parameter its own gradient.
    const bool two_tensors = c.composition().second == Second::RepeatedTensor && c.composition().order != Order::GradOfGrad;
    const Tensor x2 = two_tensors ? c.x * 1.0 : c.x2;
    ag::run_functions_eagerly(true);
    const Grads eager = c.grads(true, c.x, x2, c.y, c.n);
    ag::run_functions_eagerly(false);
    if (c.composition().place == Placement::OutsideTheCall) {
      compare(eager, c.grads(false, c.x, x2, c.y, c.n), "interpreter");
      compare(eager, c.grads(true, c.x, x2, c.y, c.n), "jit");
    } else {
      auto traced = [&c](bool jit) {
        return ag::function([&c, jit](Tensor a, Tensor a2, Tensor b, Tensor m) { return c.grads(jit, a, a2, b, m); },
                            {.jit_compile = jit});
      };
      if (c.composition().second == Second::RepeatedTensor) {
        // The Function is called with x for both parameters: each its own gradient.
        compare(eager, traced(false)(c.x, c.x, c.y, c.n), "interpreter");
        compare(eager, traced(true)(c.x, c.x, c.y, c.n), "jit");
      } else {
        compare(eager, traced(false)(c.x, c.x2, c.y, c.n), "interpreter");
        compare(eager, traced(true)(c.x, c.x2, c.y, c.n), "jit");
      }
    }
    if (!finite_differences || c.fdt != ag::float64) return found;
    // Output 0 against finite differences in x, output 1 in the second source (a few elements).
    const std::vector<double> g0 = std::get<0>(eager).to_vector<double>(), g1 = std::get<1>(eager).to_vector<double>();
    const bool second_order = c.composition().order != Order::First;
    const size_t count = static_cast<size_t>(c.x.num_elements());
    for (size_t e = 0; e < count; e += 5) {
      auto moved = [&](double delta) {
        std::vector<double> v = c.x.to_vector<double>();
        v[e] += delta;
        const Tensor a = ag::constant(v, c.x.shape());
        return c.objective(a, c.x2, c.y);
      };
      if (const std::string d = agtest::differs_from_finite_difference(g0[e], moved, second_order); !d.empty())
        found.push_back(fmt::format("{}: d/dx[{}] {}", c.what(), e, d));
    }
    for (size_t e = 0; e < static_cast<size_t>(c.second_size()); e += 3) {
      auto moved = [&](double delta) {
        Tensor a = c.x, a2 = c.x2, b = c.y;
        const auto undo = c.move_second(e, delta, a2, b);
        const double value = c.objective(a, a2, b);
        undo();
        return value;
      };
      if (const std::string d = agtest::differs_from_finite_difference(g1[e], moved, second_order); !d.empty())
        found.push_back(fmt::format("{}: d/d(second)[{}] {}", c.what(), e, d));
    }
  } catch (const std::exception& e) {
    ag::run_functions_eagerly(false);
    found.push_back(fmt::format("{}: {}", c.what(), e.what()));
  }
  return found;
}

// The mismatches of one composed program. A float32 program whose backends differ is judged by
// the same program in float64: second order multiplies the branch points of a program (a
// maximum's comparison, a reduce_max's ties, relu's sign), and a float32 value that eager code
// and compiled code round differently (another tanh at another ISA level, an FMA) can fall on
// either side of one, where the second derivative jumps. When the float64 program agrees on every
// backend and with its finite differences, the float32 difference is rounding; otherwise both
// are reported.
std::vector<std::string> check(const ComposedCase& c, bool finite_differences) {
  std::vector<std::string> found = check_once(c, finite_differences);
  if (found.empty() || c.fdt != ag::float32) return found;
  const std::vector<std::string> judge = check_once(ComposedCase(c.index(), c.composition(), {}, /*in_float64=*/true), true);
  if (judge.empty()) return {};
  found.insert(found.end(), judge.begin(), judge.end());
  return found;
}

int programs_to_run() {
  const char* e = std::getenv("AG_GRADIENT_COMPOSITIONS");
  return e ? std::max(1, std::atoi(e)) : 96;
}

void run_compositions(int first, int count) {
  const agtest::ScopedEnv opt("AG_JIT_OPT", "0");
  // AG_GRADIENT_COMPOSITION=k,place,nest,second,order: one program in one composition instead
  // (to debug a failure: the shards' messages name k and the composition).
  if (const char* e = std::getenv("AG_GRADIENT_COMPOSITION")) {
    int k, p, n, s, o;
    ASSERT_EQ(std::sscanf(e, "%d,%d,%d,%d,%d", &k, &p, &n, &s, &o), 5) << "AG_GRADIENT_COMPOSITION=" << e;
    if (first != 0) return;
    const ComposedCase c(k, {static_cast<Placement>(p), static_cast<Nesting>(n), static_cast<Second>(s), static_cast<Order>(o)});
    for (const std::string& f : check(c, true)) ADD_FAILURE() << f;
    return;
  }
  for (int k = first; k < first + count; ++k) {
    const std::vector<std::string> found = check(ComposedCase(k), /*finite_differences=*/true);
    for (const std::string& f : found) ADD_FAILURE() << f;
    if (!found.empty()) break;
  }
}

constexpr int kShards = 4;
TEST(GradientCompositionsRandom, Shard0) { run_compositions(0 * programs_to_run() / kShards, programs_to_run() / kShards); }
TEST(GradientCompositionsRandom, Shard1) { run_compositions(1 * programs_to_run() / kShards, programs_to_run() / kShards); }
TEST(GradientCompositionsRandom, Shard2) { run_compositions(2 * programs_to_run() / kShards, programs_to_run() / kShards); }
TEST(GradientCompositionsRandom, Shard3) { run_compositions(3 * programs_to_run() / kShards, programs_to_run() / kShards); }

// A deliberately wrong rule (tanh's, 1% off) is caught: by the finite differences of a float64
// program that uses it (all three backends share the rule, so they still agree).
TEST(GradientCompositionsRandom, ACanaryRuleIsCaught) {
  const agtest::ScopedEnv opt("AG_JIT_OPT", "0");
  ag::detail::set_gradient_canary(ag::OpKind::Tanh);
  int caught = 0, float64 = 0;
  for (int k = 1; k < 48 && caught == 0; k += 3) {  // k % 3 == 1: float64 programs
    const ComposedCase c(k);
    ++float64;
    caught += !check(c, /*finite_differences=*/true).empty();
  }
  ag::detail::set_gradient_canary(std::nullopt);
  EXPECT_GT(caught, 0) << "a tanh rule 1% off passed " << float64 << " float64 programs";
  // And without the canary the same programs pass.
  for (int k = 1; k < 48; k += 3) EXPECT_TRUE(check(ComposedCase(k), true).empty()) << k;
}

}  // namespace
