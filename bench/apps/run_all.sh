#!/usr/bin/env bash
# Runs every program of bench/apps in new processes and prints each one's table (from its last
# run) and its first call over all runs (min / median / max): one run's first call moves by 2x
# with the VM's phase, so a single number says little.
#   bench/apps/run_all.sh [build dir] [runs]        (defaults: build, 3)
# The disk cache is off (AG_CACHE_DIR=off): every first call compiles.
set -euo pipefail
build="${1:-build}"
runs="${2:-3}"
apps=(rnn_decode lstm_sequence logistic_regression kmeans nbody mandelbrot conjugate_gradient transformer_block heat_stencil
      periodic_heat runge_kutta game_of_life black_scholes mlp_adam pagerank gcn_train)
for app in "${apps[@]}"; do
  exe="$build/bench/apps/bench_$app"
  [ -x "$exe" ] || { echo "missing $exe (build the bench_$app target)" >&2; exit 1; }
  firsts=()
  for ((r = 0; r < runs; ++r)); do
    out="$(AG_CACHE_DIR=off "$exe")"
    # The first-call row's second column, in ms.
    firsts+=("$(awk -F'|' '/\| first call/ { v = $3; gsub(/ /, "", v); if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else sub(/ms$/, "", v); print v; exit }' <<<"$out")")
  done
  echo "$out"
  printf '%s\n' "${firsts[@]}" | sort -g | awk -v app="$app" '{ v[NR] = $1 } END {
    if (NR) printf "first call of %s over %d new processes: min %.1f ms, median %.1f ms, max %.1f ms\n\n", app, NR, v[1], v[int((NR + 1) / 2)], v[NR] }'
done
