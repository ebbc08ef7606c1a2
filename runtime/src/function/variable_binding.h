// A traced graph bound to other Variables: a concrete function traced with one Variable argument
// runs with another of the same dtype and shape (TensorFlow 2: a variable is an input of the
// concrete function, not a constant of its graph).
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "ag/graph/graph.h"

namespace ag::detail {

struct VariableState;

// Which traced Variable each call Variable takes the place of.
class VariableRebinding {
 public:
  void add(const VariableState* traced, std::shared_ptr<VariableState> bound) {
    pairs_.emplace_back(traced, std::move(bound));
  }
  const std::shared_ptr<VariableState>* find(const VariableState* traced) const {
    for (const auto& [from, to] : pairs_)
      if (from == traced) return &to;
    return nullptr;
  }

 private:
  std::vector<std::pair<const VariableState*, std::shared_ptr<VariableState>>> pairs_;
};

// `g` with every node that reads or assigns a traced Variable of `r` (sub-graphs included)
// pointing at its bound Variable; `g` itself when none does.
std::shared_ptr<const Graph> rebind_variables(const std::shared_ptr<const Graph>& g, const VariableRebinding& r);

}  // namespace ag::detail
