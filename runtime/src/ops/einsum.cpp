// ag::einsum (tf.einsum, NumPy's einsum), written in ops: a label repeated within one operand
// takes its diagonal (a gather), labels summed within one operand are reduced first, then the operands are contracted left to right, each pair as one batched
// matmul ([batch, free_a, contracted] x [batch, contracted, free_b]), and the result is
// transposed to the output's order. Gradients, staging and fusion are those of its parts.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ag/detail/ops_internal.h"
#include "ag/construct.h"
#include "ag/ops.h"

namespace ag {
namespace {

[[noreturn]] void fail(SourceLoc loc, const std::string& msg) {
  throw ValueError(fmt::format("ag::einsum: {}{}", msg, detail::at(loc)));
}

// A tensor with one label per dim.
struct Labeled {
  Tensor t;
  std::string labels;
};

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

// Reads one term's labels, expanding "..." to `ellipsis_labels`' last `rank - explicit` labels.
std::string expand_term(std::string term, int64_t rank, const std::string& ellipsis_labels, Loc loc) {
  const size_t dots = term.find("...");
  if (dots == std::string::npos) return term;
  const int64_t explicit_labels = static_cast<int64_t>(term.size()) - 3;
  const int64_t n = rank - explicit_labels;
  if (n < 0 || n > static_cast<int64_t>(ellipsis_labels.size())) fail(loc, fmt::format("'{}' does not fit rank {}", term, rank));
  return term.substr(0, dots) + ellipsis_labels.substr(ellipsis_labels.size() - static_cast<size_t>(n)) + term.substr(dots + 3);
}

// The dims of `x` for `labels` in that order, as one group: its size (static product, -1 when
// a dim is unknown), for the reshape around the matmul.
int64_t group_size(const Labeled& x, const std::string& group) {
  int64_t n = 1;
  for (char c : group) {
    const int64_t d = x.t.shape()[static_cast<int64_t>(x.labels.find(c))];
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

Tensor permuted(const Labeled& x, const std::string& order, Loc loc) {
  std::vector<int64_t> perm;
  for (char c : order) perm.push_back(static_cast<int64_t>(x.labels.find(c)));
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  return identity ? x.t : transpose(x.t, perm, loc);
}

// x's dims in the order batch + g1 + g2 as [batch..., size(g1), size(g2)].
Tensor as_matrix(const Labeled& x, const std::string& batch, const std::string& g1, const std::string& g2, Loc loc) {
  const Tensor t = permuted(x, batch + g1 + g2, loc);
  Shape target;
  for (char c : batch) target.push_back(x.t.shape()[static_cast<int64_t>(x.labels.find(c))]);
  target.push_back(group_size(x, g1));
  target.push_back(group_size(x, g2));
  if (std::count(target.begin(), target.end(), int64_t{-1}) > 1)
    fail(loc, "more than one dim of an operand is unknown while tracing where the operands are reshaped for a matmul");
  return reshape(t, target, loc);
}

Labeled contract(const Labeled& a, const Labeled& b, const std::string& keep, Loc loc) {
  std::string batch, free_a, contracted, free_b;
  for (char c : a.labels) {
    if (has(b.labels, c)) (has(keep, c) ? batch : contracted) += c;
    else free_a += c;
  }
  for (char c : b.labels)
    if (!has(a.labels, c)) free_b += c;
  const Tensor product = matmul(as_matrix(a, batch, free_a, contracted, loc), as_matrix(b, batch, contracted, free_b, loc), loc);
  // [batch..., free_a..., free_b...]: the batch dims as matmul broadcast them.
  Shape target;
  for (int64_t d = 0; d < static_cast<int64_t>(batch.size()); ++d) target.push_back(product.shape()[d]);
  for (char c : free_a) target.push_back(a.t.shape()[static_cast<int64_t>(a.labels.find(c))]);
  for (char c : free_b) target.push_back(b.t.shape()[static_cast<int64_t>(b.labels.find(c))]);
  if (std::count(target.begin(), target.end(), int64_t{-1}) > 1)
    fail(loc, "more than one dim of the result is unknown while tracing where a matmul's result is reshaped");
  return {reshape(product, target, loc), batch + free_a + free_b};
}

// x's diagonal over its first repeated label c ("ii" -> "i"): the two dims moved last, merged
// into one, and every (d + 1)-th element taken (a gather, so gradients follow it back).
Labeled diagonal(const Labeled& x, char c, Loc loc) {
  const size_t first = x.labels.find(c), second = x.labels.find(c, first + 1);
  const int64_t d1 = x.t.shape()[static_cast<int64_t>(first)], d2 = x.t.shape()[static_cast<int64_t>(second)];
  if (d1 >= 0 && d2 >= 0 && d1 != d2)
    fail(loc, fmt::format("label '{}' names dims of sizes {} and {} (a diagonal needs them equal)", c, d1, d2));
  std::vector<int64_t> perm;
  std::string rest;
  for (size_t k = 0; k < x.labels.size(); ++k)
    if (k != first && k != second) {
      perm.push_back(static_cast<int64_t>(k));
      rest += x.labels[k];
    }
  perm.push_back(static_cast<int64_t>(first));
  perm.push_back(static_cast<int64_t>(second));
  Shape target;
  for (size_t k = 0; k + 2 < perm.size(); ++k) target.push_back(x.t.shape()[perm[k]]);
  target.push_back(d1 >= 0 ? d1 * d1 : (d2 >= 0 ? d2 * d2 : -1));
  if (std::count(target.begin(), target.end(), int64_t{-1}) > 1)
    fail(loc, fmt::format("label '{}' repeats in an operand with more than one dim unknown while tracing", c));
  const Tensor flat = reshape(transpose(x.t, perm, loc), target, loc);
  const Tensor n = d1 >= 0 ? Tensor(d1) : d2 >= 0 ? Tensor(d2) : gather(shape_of(x.t, loc), Tensor(static_cast<int64_t>(first)), 0, loc);
  const Tensor indices = range(0, n, 1) * (n + 1);
  return {gather(flat, indices, static_cast<int64_t>(target.rank()) - 1, loc), rest + c};
}

}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands, Loc loc) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t pos = 0;;) {
    const size_t comma = lhs.find(',', pos);
    terms.push_back(lhs.substr(pos, comma - pos));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (terms.size() != operands.size())
    fail(loc, fmt::format("'{}' has {} operand terms for {} operands", std::string(equation), terms.size(), operands.size()));
  // Labels for the ellipsis' dims: characters no equation can name.
  int64_t ellipsis = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (operands[i].has_unknown_rank()) fail(loc, fmt::format("operand {} has an unknown rank", i));
    if (has(terms[i], '.')) ellipsis = std::max<int64_t>(ellipsis, operands[i].rank() - (static_cast<int64_t>(terms[i].size()) - 3));
    if (operands[i].dtype() != operands[0].dtype())
      throw TypeError(fmt::format("ag::einsum: the operands have different dtypes ({} and {}){}", dtype_name(operands[0].dtype()),
                                  dtype_name(operands[i].dtype()), detail::at(loc)));
  }
  std::string ellipsis_labels;
  for (int64_t i = 0; i < ellipsis; ++i) ellipsis_labels += static_cast<char>(1 + i);
  std::vector<Labeled> xs;
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::string labels = expand_term(terms[i], operands[i].rank(), ellipsis_labels, loc);
    for (char c : labels)
      if (!std::isalpha(static_cast<unsigned char>(c)) && c > ellipsis) fail(loc, fmt::format("'{}' is not a label", c));
    if (static_cast<int64_t>(labels.size()) != operands[i].rank())
      fail(loc, fmt::format("term '{}' names {} dims, operand {} has shape {}", terms[i], labels.size(), i, operands[i].shape().str()));
    xs.push_back({operands[i], labels});
  }
  // The output: given, or NumPy's implicit one (the ellipsis, then the labels seen once, sorted).
  std::string out;
  if (arrow != std::string::npos) {
    out = eq.substr(arrow + 2);
    const size_t dots = out.find("...");
    if (dots != std::string::npos) out = out.substr(0, dots) + ellipsis_labels + out.substr(dots + 3);
  } else {
    std::string once;
    for (const Labeled& x : xs)
      for (char c : x.labels) {
        int count = 0;
        for (const Labeled& y : xs) count += static_cast<int>(std::count(y.labels.begin(), y.labels.end(), c));
        if (count == 1 && c > ellipsis) once += c;
      }
    std::sort(once.begin(), once.end());
    out = ellipsis_labels + once;
  }
  for (char c : out) {
    bool found = false;
    for (const Labeled& x : xs) found = found || has(x.labels, c);
    if (!found) fail(loc, fmt::format("output label '{}' is in no operand", c));
    if (std::count(out.begin(), out.end(), c) > 1) fail(loc, fmt::format("output label '{}' repeats", c));
  }
  // A label repeated within one operand takes its diagonal ("ii->i", "ii->" the trace).
  for (Labeled& x : xs)
    for (size_t k = 0; k < x.labels.size(); ++k)
      if (std::count(x.labels.begin(), x.labels.end(), x.labels[k]) > 1) {
        x = diagonal(x, x.labels[k], loc);
        k = static_cast<size_t>(-1);  // start over: the labels moved
      }
  // Labels needed after operand i: the output's and those of the operands after it.
  auto needed_after = [&](size_t i) {
    std::string keep = out;
    for (size_t j = i + 1; j < xs.size(); ++j) keep += xs[j].labels;
    return keep;
  };
  // Sum out each operand's labels that nothing else names.
  for (size_t i = 0; i < xs.size(); ++i) {
    std::string others = out;
    for (size_t j = 0; j < xs.size(); ++j)
      if (j != i) others += xs[j].labels;
    std::vector<int64_t> axes;
    std::string kept;
    for (size_t d = 0; d < xs[i].labels.size(); ++d) {
      if (has(others, xs[i].labels[d])) kept += xs[i].labels[d];
      else axes.push_back(static_cast<int64_t>(d));
    }
    if (!axes.empty()) xs[i] = {reduce_sum(xs[i].t, axes, false, loc), kept};
  }
  Labeled acc = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) acc = contract(acc, xs[i], needed_after(i), loc);
  return permuted(acc, out, loc);
}

}  // namespace ag
