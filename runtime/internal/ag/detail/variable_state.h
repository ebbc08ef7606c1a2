// The shared state of an ag::Variable: its current value, guarded for concurrent calls.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "ag/detail/spin_mutex.h"
#include "ag/tensor.h"

namespace ag::detail {

struct VariableState {
  mutable SpinMutex mu;  // short critical sections: spin_mutex.h
  Tensor value;  // always concrete
  DType dtype = DType::Float32;
  Shape shape;
  std::string name;
  uint64_t id = 0;  // process-unique, for signatures and logs

  Tensor read() const {
    std::lock_guard lock(mu);
    return value;
  }
  void write(Tensor v) {
    std::lock_guard lock(mu);
    value = std::move(v);
  }
  // "'v' (float32[2])" or "variable #3 (float32[2])".
  std::string describe() const;
};

// A process-unique VariableState::id (Variables, and the states graph text names: parser.cpp).
uint64_t new_variable_id();

}  // namespace ag::detail
