// ag::Variable: mutable state that traced code captures by reference (tf.Variable).
#pragma once

#include <memory>
#include <string>

#include "ag/ops.h"
#include "ag/tensor.h"

namespace ag {

namespace detail {
struct VariableState;
}

class Variable {
 public:
  // `init` must be a concrete tensor (or a value computed from constants). Inside a traced
  // function a Variable may be created on the Function's first trace only (ValueError later).
  explicit Variable(const Tensor& init, std::string name = {});
  template <Arithmetic T>
  explicit Variable(T init, std::string name = {}) : Variable(Tensor(init), std::move(name)) {}

  // The current value. While tracing: a read in the graph, ordered with the assignments.
  Tensor value() const;
  Tensor read_value() const { return value(); }
  operator Tensor() const { return value(); }  // NOLINT: variables read like tensors

  // Each returns the new value. The dtype and shape of a Variable never change.
  Tensor assign(Operand v);
  Tensor assign_add(Operand v);
  Tensor assign_sub(Operand v);

  DType dtype() const;
  const Shape& shape() const;
  const std::string& name() const;

  // Internal: identity and shared state, and a handle to an existing state.
  const std::shared_ptr<detail::VariableState>& state() const { return state_; }
  static Variable from_state(std::shared_ptr<detail::VariableState> state);

 private:
  Variable() = default;
  std::shared_ptr<detail::VariableState> state_;
};

}  // namespace ag
