// What a concrete function costs (JAX's compiled.cost_analysis() and memory_analysis()):
// ConcreteFunction::cost_analysis(), ::memory_analysis(). docs/debugging.md, "Costs".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ag/error.h"

namespace ag {

// One node of the optimized graph, before fusion: its arithmetic and the bytes its operands and
// result take (what it would read and write were it run alone).
struct NodeCost {
  std::string op;     // "ag::matmul"
  std::string value;  // "%5" (graph text's name; "%3/body/%2" inside a loop body)
  SourceLoc loc;      // its line
  double flops = 0;          // multiply-adds count two
  double transcendentals = 0;  // exp, log, tanh, ... (one per element; also counted in flops)
  double bytes_read = 0, bytes_written = 0;
};

struct CostAnalysis {
  double flops = 0, transcendentals = 0, bytes_read = 0, bytes_written = 0;
  std::vector<NodeCost> nodes;  // in graph order, sub-graphs after their node
  // A loop body (staged while) counted once, as one iteration: its trip count is a run-time value.
  bool loop_bodies_counted_once = false;
  // A dim unknown in the signature counted as 1.
  bool unknown_dims_counted_as_one = false;
  // A table: totals, then the costliest nodes (up to `top`) with their lines.
  std::string str(size_t top = 10) const;
};

struct MemoryAnalysis {
  int64_t argument_bytes = 0;   // the parameters' buffers (read in place, never copied)
  int64_t output_bytes = 0;     // the results' buffers (-1: a dim known only at run time)
  int64_t constant_bytes = 0;   // constants the code reads (captured tensors)
  // Temporaries: the static arena the compiled code allocates per call (sub-graphs included),
  // -1 when not compiled by the JIT; values sized at run time are allocated apart and counted
  // in `runtime_sized_temporaries`.
  int64_t temp_bytes = -1;
  int64_t runtime_sized_temporaries = 0;
  std::string str() const;
};

}  // namespace ag
