#!/usr/bin/env bash
# The tour of agc: runs each sample under a heading, dumping everything it compiles
# (graphs, DOT, LLVM IR, assembly) into ag_dump/.   tour.sh <build-dir> [sample | --list]
set -euo pipefail
build=$(cd "$1" && pwd)
sample=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
dump=${AG_TOUR_DUMP:-$root/ag_dump}
if [ -t 1 ] && [ "${CI:-}" != true ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold='' plain=''; fi

# In the order of TensorFlow's guides: graphs and tracing, retracing, state and debugging,
# AutoGraph's control flow, then the limitations.
tour=(simple_computation basics tracing_rules polymorphism container_args struct_params input_signature
      concrete_functions state get_mse power conditional loops fizzbuzz collatz dynamic_rnn
      side_effects objects random_numbers gradients custom_gradients train_mlp cnn_inference heat_stencil interop
      deploy debugging limitations)
# Data-parallel training runs under mpirun: in the tour when Open MPI is installed (./run.sh
# installs it) and the sample was built with agc::distribute.
if command -v mpirun >/dev/null && [ -x "$build/samples/train_data_parallel" ]; then
  tour=("${tour[@]/train_mlp/train_mlp train_data_parallel}")
  read -r -a tour <<<"${tour[*]}"
fi
declare -A about=(
  [simple_computation]="a function traced into a graph: matmul + add + relu"
  [basics]="Functions are like ops: they nest, and plain C++ helpers are traced into them"
  [tracing_rules]="a trace per new input signature; side effects only while tracing"
  [polymorphism]="one Function, one concrete function per signature"
  [container_args]="a model's weights as a std::vector<ag::Tensor>: a trace per length and shapes"
  [struct_params]="a model's parameters as a struct: fields in the signature, ag::grad returns the struct"
  [input_signature]="one trace for many shapes; wrong dtype/rank errors; reduce_retracing"
  [concrete_functions]="obtaining, printing and calling concrete functions"
  [state]="plain C++ values are frozen at trace time, Variables are live"
  [get_mse]="debugging with run_functions_eagerly; non-strict execution"
  [power]="seeing the speed-up: 100 chained 10x10 matmuls, eager vs compiled"
  [conditional]="a tensor if, staged into the graph by ag-rewrite"
  [loops]="a tensor while loop is staged; a loop over C++ data is unrolled"
  [fizzbuzz]="a tensor for loop with if/else if/else and ag::print"
  [collatz]="a tensor while loop"
  [dynamic_rnn]="TensorArray accumulation in a staged loop"
  [side_effects]="C++ side effects run while tracing; globals, counters and iterators"
  [objects]="methods, objects and Variables as state"
  [random_numbers]="C++ random numbers are frozen; ag::random::normal and Generators draw on every call"
  [gradients]="GradientTape around a Function, a gradient through a while loop, ag::grad"
  [custom_gradients]="custom_gradient, recompute_grad, a Hessian by jacobian, batch_jacobian, compiled"
  [train_mlp]="train_step: forward, backward and optimizer in one compiled Function; an MLP on two spirals"
  [train_data_parallel]="the same MLP on 2 processes under mpirun: gradients averaged by all_reduce inside the compiled step"
  [cnn_inference]="a LeNet-style CNN on uint8 images: conv, pool, dense, softmax from ag::nn, trained, then compiled"
  [heat_stencil]="a heat equation with x.at(...).set in a staged loop, updated in place, against a plain C++ loop"
  [interop]="zero-copy interop: an Eigen matrix through a compiled Function and back, a DLPack round trip"
  [deploy]="a trained model saved, loaded by another program on the JIT, and compiled ahead of time into a program without LLVM"
  [debugging]="a NaN found with its op and line, compiled code compared with eager, costs, a profile"
  [limitations]="leaked tensors, recursion, creating Variables"
)
# Samples whose rewritten source the tour shows (what AutoGraph's to_code shows).
declare -A show_rewrite=([conditional]=1 [loops]=1)
# Samples run with AG_REPORT: each Function leaves one HTML page (graphs, passes, IR, assembly,
# sources side by side) in the sample's dump directory.
declare -A html_report=([collatz]=1)

# samples/deploy: its model was trained and saved by the build (deploy_train); two programs serve it.
run_deploy() {
  local dir="$build/samples/deploy"
  [ -x "$dir/deploy_serve_aot" ] || { echo "agc: sample 'deploy' is not built in $build" >&2; return 1; }
  printf '\n%s=== deploy — %s ===%s\n' "$bold" "${about[deploy]}" "$plain"
  printf '%s--- deploy_serve: loads %s on the JIT ---%s\n' "$bold" "samples/deploy/spirals_model" "$plain"
  "$dir/deploy_serve" "$dir/spirals_model"
  printf '%s--- deploy_serve_aot: linked with the library ag_add_aot_library made ---%s\n' "$bold" "$plain"
  "$dir/deploy_serve_aot" "$dir/spirals_model"
  echo "ldd deploy_serve_aot | grep -c libLLVM: $(ldd "$dir/deploy_serve_aot" | grep -c libLLVM || true)"
}

# samples/train_data_parallel: two processes started by mpirun (--allow-run-as-root: CI is root).
run_data_parallel() {
  printf '\n%s=== train_data_parallel — %s ===%s\n' "$bold" "${about[train_data_parallel]}" "$plain"
  echo "\$ mpirun -np 2 build/samples/train_data_parallel"
  rm -rf "${dump:?}/train_data_parallel"
  (cd "$dump" && AG_DUMP="$dump/train_data_parallel" mpirun --allow-run-as-root --oversubscribe -np 2 \
    "$build/samples/train_data_parallel")
}

run_one() {
  [ "$1" = deploy ] && { run_deploy; return; }
  [ "$1" = train_data_parallel ] && { run_data_parallel; return; }
  local name=$1 exe="$build/samples/$1"
  [ -x "$exe" ] || { echo "agc: sample '$name' is not built in $build" >&2; return 1; }
  printf '\n%s=== %s — %s ===%s\n' "$bold" "$name" "${about[$name]}" "$plain"
  rm -rf "${dump:?}/$name"  # no stale files from an earlier run
  local vars=(AG_DUMP="$dump/$name")
  [ -n "${html_report[$name]:-}" ] && vars+=(AG_REPORT="$dump/$name")
  (cd "$dump" && env "${vars[@]}" "$exe" "$dump/$name.dot")
  if [ -n "${html_report[$name]:-}" ]; then
    local page="$dump/$name/$name.html"
    [ -f "$page" ] || { echo "agc: the tour expected the HTML report $page" >&2; return 1; }
    printf '
%s--- the HTML report of Function %s: %s (open it in a browser) ---%s
' "$bold" "$name" "$page" "$plain"
  fi
  if [ -n "${show_rewrite[$name]:-}" ] && [ -x "$build/tools/ag-rewrite" ]; then
    printf '\n%s--- what ag-rewrite made of samples/%s.cpp (ag-rewrite --diff) ---%s\n' "$bold" "$name" "$plain"
    "$build/tools/ag-rewrite" --diff --no-line-directives --no-register "$root/samples/$name.cpp" -- \
      -std=c++20 -I"$root/runtime/include" | sed "s|$root/||"
  fi
}

if [ "$sample" = --list ]; then
  for s in "${tour[@]}"; do printf '  %-20s %s\n' "$s" "${about[$s]}"; done
  exit 0
fi
if [ -n "$sample" ] && [ -z "${about[$sample]+x}" ]; then
  echo "agc: no sample named '$sample'; the samples are:" >&2
  for s in "${tour[@]}"; do printf '  %-20s %s\n' "$s" "${about[$s]}" >&2; done
  exit 2
fi

mkdir -p "$dump"
if [ -n "$sample" ]; then
  run_one "$sample"
else
  for s in "${tour[@]}"; do run_one "$s"; done
fi

printf '\n%sEverything the samples compiled is in %s:%s\n' "$bold" "$dump" "$plain"
echo "  <sample>/<function>.<signature>.graph.txt   the optimized graph (and .NN-<pass>.graph.txt after each pass)"
echo "  <sample>/<function>.<signature>.dot         Graphviz (simple_computation.png is rendered when dot is installed)"
echo "  <sample>/<function>.<signature>.ll / .opt.ll / .s   LLVM IR before/after optimization, and assembly (JIT)"
echo "  collatz/collatz.html                        the HTML report of collatz: all of the above on one page (AG_REPORT)"
