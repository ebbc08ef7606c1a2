// Corpus: AutoGraph's semantics where C++ reads differently from TensorFlow's functional forms:
// mutating members as state, variables first given a value inside staged constructs,
// composite state (array and vector elements, struct fields), liveness, and loops that only a
// tensor can stop. Each must give the eager answer when staged.
#include <ag/ag.h>

#include <array>
#include <vector>

#include "e2e.h"

using ag::Tensor;
using ag::TensorArray;

// --- A mutating member call makes its object state, like an assignment ---------------------

AG_FUNCTION Tensor squares_unassigned(Tensor n) {
  TensorArray squares(ag::int32);
  for (Tensor i : ag::range(n)) squares.write(i, i * i);  // result not assigned
  return ag::reduce_sum(squares.stack());
}
AG_E2E(squares_unassigned, std::tuple{0}, std::tuple{1}, std::tuple{5});

AG_FUNCTION Tensor squares_stacked(Tensor n) {
  TensorArray squares(ag::int32);
  for (Tensor i : ag::range(n)) squares.write(i, i * i);
  return squares.stack();
}
AG_E2E(squares_stacked, std::tuple{1}, std::tuple{4});

AG_FUNCTION Tensor write_in_while(Tensor x, Tensor n) {
  TensorArray acc(ag::float32);
  Tensor i = 0;
  while (i < n) {
    acc.write(i, x * ag::cast(i, ag::float32));
    i += 1;
  }
  return acc.stack();
}
AG_E2E(write_in_while, std::tuple{1.5f, 3}, std::tuple{2.0f, 1});

AG_FUNCTION Tensor write_in_branches(Tensor x) {
  TensorArray ta(ag::float32);
  if (x > 0) ta.write(0, x);
  else ta.write(0, -x);
  ta.write(1, x * 2);
  return ta.stack();
}
AG_E2E(write_in_branches, std::tuple{3.0f}, std::tuple{-2.0f});

AG_FUNCTION Tensor write_assigned_still_works(Tensor n) {
  TensorArray ta(ag::int32);
  for (Tensor i : ag::range(n)) ta = ta.write(i, i + 10);
  return ta.stack();
}
AG_E2E(write_assigned_still_works, std::tuple{3});

AG_FUNCTION Tensor write_nested_loops(Tensor rows, Tensor cols) {
  TensorArray flat(ag::int32);
  Tensor k = 0;
  for (Tensor r : ag::range(rows)) {
    for (Tensor c : ag::range(cols)) {
      flat.write(k, r * 10 + c);
      k += 1;
    }
  }
  return flat.stack();
}
AG_E2E(write_nested_loops, std::tuple{2, 3}, std::tuple{3, 1});

static void record(TensorArray& log, const Tensor& at, const Tensor& value) { log.write(at, value); }

AG_FUNCTION Tensor write_through_reference(Tensor x) {
  TensorArray log(ag::float32);
  Tensor i = 0;
  while (x > 1) {
    record(log, i, x);
    x = x / 2;
    i += 1;
  }
  return log.stack();
}
AG_E2E(write_through_reference, std::tuple{20.0f}, std::tuple{3.0f});

AG_FUNCTION Tensor write_then_break(Tensor x) {
  TensorArray seen(ag::float32);
  Tensor k = 0;
  for (Tensor v : x) {
    if (v < 0) break;
    seen.write(k, v);
    k += 1;
  }
  return seen.stack();
}
AG_E2E(write_then_break, std::tuple{ag::constant({1.0f, 2.0f, -1.0f, 4.0f})},
       std::tuple{ag::constant({5.0f, 6.0f})});

// --- Variables first given a value inside a staged loop or branch -------------------------

AG_FUNCTION Tensor last_doubled(Tensor x, Tensor n) {
  Tensor last;
  Tensor i = 0;
  while (i < n) {
    last = x[i] * 2;
    i += 1;
  }
  return last;
}
AG_E2E(last_doubled, std::tuple{ag::constant({1.0f, 2.0f, 3.0f}), 2}, std::tuple{ag::constant({4.0f}), 1});

AG_FUNCTION Tensor last_from_inner_local(Tensor n) {
  Tensor last;
  for (Tensor i : ag::range(n)) {
    Tensor sq = i * i;
    last = sq + 1;
  }
  return last;
}
AG_E2E(last_from_inner_local, std::tuple{1}, std::tuple{4});

AG_FUNCTION Tensor first_defined_in_do(Tensor x) {
  Tensor halvings = 0.0f;
  Tensor last;
  do {
    last = x;
    x = x / 2;
    halvings += 1;
  } while (x > 1);
  return last + halvings;
}
AG_E2E(first_defined_in_do, std::tuple{1.0f}, std::tuple{40.0f});

AG_FUNCTION Tensor first_defined_in_c_for(Tensor n) {
  Tensor prod;
  Tensor acc = 1;
  for (Tensor i = 1; i <= n; i += 1) {
    acc = acc * i;
    prod = acc - i;
  }
  return prod;
}
AG_E2E(first_defined_in_c_for, std::tuple{1}, std::tuple{5});

AG_FUNCTION Tensor defined_in_both_branches(Tensor x) {
  Tensor y;
  if (x > 0) y = x * 2;
  else y = -x;
  return y + 1;
}
AG_E2E(defined_in_both_branches, std::tuple{3}, std::tuple{-4});

AG_FUNCTION Tensor found_before_break(Tensor x, Tensor limit) {
  Tensor found;
  for (Tensor v : x) {
    if (v > limit) {
      found = v;
      break;
    }
  }
  return found;
}
AG_E2E(found_before_break, std::tuple{ag::constant({1, 5, 9}), 4}, std::tuple{ag::constant({7, 8}), 0});

AG_FUNCTION Tensor defined_in_nested_loops(Tensor n) {
  Tensor inner_last;
  Tensor i = 0;
  while (i < n) {
    Tensor j = 0;
    while (j <= i) {
      inner_last = i * 100 + j;
      j += 1;
    }
    i += 1;
  }
  return inner_last;
}
AG_E2E(defined_in_nested_loops, std::tuple{1}, std::tuple{3});

AG_FUNCTION Tensor vector_defined_in_loop(Tensor x, Tensor n) {
  Tensor row;
  for (Tensor i : ag::range(n)) row = x * ag::cast(i + 1, ag::float32);
  return row;
}
AG_E2E(vector_defined_in_loop, std::tuple{ag::constant({1.0f, -2.0f}), 3});

// --- Composite state: array and vector elements, struct fields -----------------------------

AG_FUNCTION Tensor fib_in_array(Tensor n) {
  std::array<Tensor, 2> ab = {Tensor(0), Tensor(1)};
  Tensor i = 0;
  while (i < n) {
    Tensor next = ab[0] + ab[1];
    ab[0] = ab[1];
    ab[1] = next;
    i += 1;
  }
  return ab[0];
}
AG_E2E(fib_in_array, std::tuple{0}, std::tuple{1}, std::tuple{10});

AG_FUNCTION Tensor vector_elements_in_for(Tensor n) {
  std::vector<Tensor> sums = {Tensor(0), Tensor(0), Tensor(0)};
  for (Tensor i : ag::range(n)) {
    sums[0] += i;
    sums[1] += i * i;
    sums[2] = sums[2] + 1;
  }
  return ag::stack(sums);
}
AG_E2E(vector_elements_in_for, std::tuple{0}, std::tuple{4});

AG_FUNCTION Tensor vector_elements_by_plain_index(Tensor x) {
  std::vector<Tensor> powers = {Tensor(1.0f), Tensor(1.0f), Tensor(1.0f)};
  while (x < 100) {
    for (int k = 0; k < 3; ++k) powers[k] = powers[k] * static_cast<float>(k + 1);
    x = x * 3;
  }
  return ag::stack(powers);
}
AG_E2E(vector_elements_by_plain_index, std::tuple{200.0f}, std::tuple{50.0f}, std::tuple{2.0f});

AG_FUNCTION Tensor array_element_in_if(Tensor x) {
  std::array<Tensor, 2> pair = {x, x};
  if (x > 0) pair[0] = x * 10;
  else pair[1] = x - 10;
  return pair[0] + pair[1];
}
AG_E2E(array_element_in_if, std::tuple{2}, std::tuple{-3});

struct Params {
  Tensor w;
  Tensor b;
};

AG_FUNCTION Tensor struct_fields_in_loop(Tensor x, Tensor steps) {
  Params params{Tensor(1.0f), Tensor(0.0f)};
  for (Tensor s : ag::range(steps)) {
    params.w = params.w * 0.5f;
    params.b += ag::cast(s, ag::float32);
  }
  return x * params.w + params.b;
}
AG_E2E(struct_fields_in_loop, std::tuple{4.0f, 0}, std::tuple{4.0f, 3});

AG_FUNCTION Tensor struct_field_in_if(Tensor x) {
  Params p{x, Tensor(0.0f)};
  if (x < 0) p.b = -x;
  else p.w = x * 3;
  return p.w + p.b;
}
AG_E2E(struct_field_in_if, std::tuple{2.0f}, std::tuple{-1.0f});

struct Layer {
  Params params;
  Tensor scale;
};

AG_FUNCTION Tensor nested_struct_fields(Tensor x, Tensor n) {
  Layer layer{{Tensor(2.0f), Tensor(1.0f)}, Tensor(1.0f)};
  Tensor i = 0;
  while (i < n) {
    layer.params.w = layer.params.w + 1;
    layer.scale = layer.scale * 2;
    i += 1;
  }
  return (x * layer.params.w + layer.params.b) * layer.scale;
}
AG_E2E(nested_struct_fields, std::tuple{1.0f, 0}, std::tuple{1.0f, 2});

AG_FUNCTION Tensor whole_struct_assigned(Tensor x) {
  Params p{Tensor(0.0f), Tensor(0.0f)};
  while (x > 1) {
    p = Params{p.w + 1, p.b + x};
    x = x / 2;
  }
  return p.w * 100 + p.b;
}
AG_E2E(whole_struct_assigned, std::tuple{0.5f}, std::tuple{9.0f});

// --- Liveness: only what is live after a staged statement is its state -------------------

AG_FUNCTION Tensor dead_after_early_return(Tensor x, Tensor flag) {
  Tensor t = x;
  if (flag) return t;
  t = ag::stack({t, t});
  return ag::reduce_sum(t);
}
AG_E2E(dead_after_early_return, std::tuple{3, true}, std::tuple{3, false});

AG_FUNCTION Tensor loop_temporary_changes_shape(Tensor x, Tensor n) {
  Tensor total = 0.0f;
  Tensor t;
  for (Tensor i : ag::range(n)) {
    t = ag::stack({x, x * ag::cast(i, ag::float32)});
    total += ag::reduce_sum(t);
  }
  return total;
}
AG_E2E(loop_temporary_changes_shape, std::tuple{1.5f, 0}, std::tuple{1.5f, 3});

// --- Loops that only a tensor can stop ---------------------------------------------------

AG_FUNCTION Tensor newton_sqrt(Tensor a) {
  Tensor x = a;
  Tensor steps = 0;
  while (true) {
    Tensor next = 0.5f * (x + a / x);
    steps += 1;
    if (ag::abs(next - x) < 1e-4f) break;
    x = next;
  }
  return ag::stack({x, ag::cast(steps, ag::float32)});
}
AG_E2E(newton_sqrt, std::tuple{1.0f}, std::tuple{2.0f}, std::tuple{100.0f});

AG_FUNCTION Tensor for_ever_halving(Tensor x) {
  Tensor count = 0;
  for (;;) {
    if (x < 1) break;
    x = x / 2;
    count += 1;
  }
  return count;
}
AG_E2E(for_ever_halving, std::tuple{0.5f}, std::tuple{1.0f}, std::tuple{37.0f});

AG_FUNCTION Tensor for_ever_with_increment(Tensor limit) {
  Tensor i = 0;
  Tensor total = 0;
  for (;; i += 1) {
    if (total > limit) break;
    total += i;
  }
  return ag::stack({i, total});
}
AG_E2E(for_ever_with_increment, std::tuple{-1}, std::tuple{10});

AG_FUNCTION Tensor while_true_returns(Tensor x) {
  Tensor steps = 0;
  while (true) {
    if (x % 7 == 0) return steps * 1000 + x;
    x += 1;
    steps += 1;
  }
}
AG_E2E(while_true_returns, std::tuple{7}, std::tuple{8}, std::tuple{20});

AG_FUNCTION Tensor plain_flag_and_tensor_break(Tensor x) {
  const bool enabled = true;
  Tensor n = 0;
  while (enabled) {
    x = x * 3;
    n += 1;
    if (x > 1000) break;
  }
  return n;
}
AG_E2E(plain_flag_and_tensor_break, std::tuple{1}, std::tuple{2000});

AG_FUNCTION Tensor do_forever_with_continue(Tensor x) {
  Tensor odd = 0;
  do {
    x -= 1;
    if (x % 2 == 0) continue;
    odd += 1;
    if (x <= 0) break;
  } while (true);
  return odd;
}
AG_E2E(do_forever_with_continue, std::tuple{1}, std::tuple{6}, std::tuple{9});

AG_FUNCTION Tensor nested_forever_loops(Tensor n) {
  Tensor i = 0;
  Tensor pairs = 0;
  while (true) {
    if (i >= n) break;
    Tensor j = 0;
    while (true) {
      if (j > i) break;
      pairs += 1;
      j += 1;
    }
    i += 1;
  }
  return pairs;
}
AG_E2E(nested_forever_loops, std::tuple{0}, std::tuple{1}, std::tuple{4});

AG_FUNCTION Tensor forever_builds_array(Tensor x) {
  TensorArray trail(ag::float32);
  Tensor k = 0;
  while (true) {
    trail.write(k, x);
    k += 1;
    if (x < 2) break;
    x = ag::sqrt(x);
  }
  return trail.stack();
}
AG_E2E(forever_builds_array, std::tuple{1.0f}, std::tuple{256.0f});

// Found by the program fuzzer: `i` is written in the then-branch and read in the else-branch,
// and dead after the if. The else-branch is traced after the then-branch, so `i` is state of
// the if (restored between the branches) although nothing reads it after.
AG_FUNCTION Tensor written_in_one_branch_read_in_the_other(Tensor a, Tensor b) {
  Tensor i = a, r = 0;
  if (a < b) {
    i = i + 1;
    r = i;
  } else {
    Tensor c = 0;
    while (c < 2 && (i <= a ? a : b) > 0) c += 1;
    r = c + i;
  }
  i = b;
  return r + i;
}
AG_E2E(written_in_one_branch_read_in_the_other, std::tuple{1, 2}, std::tuple{7, 1}, std::tuple{-3, -5});

// Found by the program fuzzer: a `?:` on a tensor condition with int arms, as the operand of a
// tensor operator, becomes ag::if_exp (it was left as C++, which cannot branch on a traced tensor).
AG_FUNCTION Tensor int_arms_into_a_tensor_operator(Tensor x) {
  Tensor c = 0;
  for (auto i : ag::range(3)) c += (x > i) ? 1 : 10;
  return c * (x < 0 ? -1 : 1);
}
AG_E2E(int_arms_into_a_tensor_operator, std::tuple{-1}, std::tuple{1}, std::tuple{5});

// Found by the program fuzzer: as above, but the write is in an if nested in the then-branch,
// and the read in the else-branch's condition. The inner if must carry `t` out too (it is
// live at the end of the outer then-branch, which hands it to the outer if).
AG_FUNCTION Tensor written_in_a_nested_if_read_in_the_other_branch(Tensor a, Tensor b) {
  Tensor t = a + 1, r = 0;
  if (a < b) {
    if (a > 0) t = (b > 0) ? 2 : -1;
    r = a;
  } else if (a > t * 2) {
    r = t;
  }
  t = b;
  return r + t;
}
AG_E2E(written_in_a_nested_if_read_in_the_other_branch, std::tuple{1, 2}, std::tuple{-4, 3}, std::tuple{7, 1}, std::tuple{-3, -5});
