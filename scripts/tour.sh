#!/usr/bin/env bash
# The tour of agc: runs each sample under a heading, dumping everything it compiles
# (graphs, DOT, LLVM IR, assembly) into ag_dump/.   tour.sh <build-dir> [sample]
set -euo pipefail
build=$(cd "$1" && pwd)
sample=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
dump="$root/ag_dump"

tour=(simple_computation tracing_rules polymorphism input_signature state get_mse power
      conditional fizzbuzz collatz dynamic_rnn)
declare -A about=(
  [simple_computation]="a function traced into a graph: matmul + add + relu"
  [tracing_rules]="a trace per new input signature; side effects only while tracing"
  [polymorphism]="one Function, one concrete function per signature"
  [input_signature]="one trace for many shapes; wrong dtype/rank errors; reduce_retracing"
  [state]="plain C++ values are frozen at trace time, Variables are live"
  [get_mse]="debugging with run_functions_eagerly; non-strict execution"
  [power]="seeing the speed-up: 100 chained 10x10 matmuls, eager vs compiled"
  [conditional]="a tensor if, staged into the graph by ag-rewrite"
  [fizzbuzz]="a tensor for loop with if/else if/else and ag::print"
  [collatz]="a tensor while loop"
  [dynamic_rnn]="TensorArray accumulation in a staged loop"
)

run_one() {
  local name=$1 exe="$build/samples/$1"
  [ -x "$exe" ] || { echo "(sample '$name' is not built)"; return 0; }
  printf '\n\033[1m=== %s — %s ===\033[0m\n' "$name" "${about[$name]:-}"
  (cd "$dump" && AG_DUMP="$dump/$name" "$exe" "$dump/$name.dot")
  if [ "$name" = conditional ] && [ -x "$build/tools/ag-rewrite" ]; then
    printf '\n\033[1m--- what ag-rewrite made of samples/conditional.cpp (ag-rewrite --diff) ---\033[0m\n'
    "$build/tools/ag-rewrite" --diff --no-line-directives --no-register "$root/samples/conditional.cpp" -- \
      -std=c++20 -I"$root/runtime/include" | sed "s|$root/||"
  fi
}

mkdir -p "$dump"
if [ -n "$sample" ]; then
  run_one "$sample"
else
  for s in "${tour[@]}"; do run_one "$s"; done
fi

if command -v dot >/dev/null && [ -f "$dump/simple_computation.dot" ]; then
  dot -Tpng "$dump/simple_computation.dot" -o "$dump/simple_computation.png"
  dot -Tsvg "$dump/simple_computation.dot" -o "$dump/simple_computation.svg"
fi
printf '\n\033[1mEverything the samples compiled is in %s:\033[0m\n' "$dump"
echo "  <sample>/<function>.<signature>.graph.txt   the optimized graph (and .NN-<pass>.graph.txt after each pass)"
echo "  <sample>/<function>.<signature>.dot         Graphviz (simple_computation.png is rendered when dot is installed)"
echo "  <sample>/<function>.<signature>.ll / .opt.ll / .s   LLVM IR before/after optimization, and assembly (JIT)"
