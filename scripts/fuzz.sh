#!/usr/bin/env bash
# Long-running reliability tools (docs/reliability.md). ./test.sh runs small fixed batches of both.
#
#   scripts/fuzz.sh programs N [--seed S] [--minutes M] [more fuzz_programs.py options]
#       Generates N random AG_FUNCTION programs with plain C++ references, builds them through
#       ag-rewrite against agc as a package (find_package from build/), and runs each directly,
#       under run_functions_eagerly, on the interpreter and compiled. A mismatch prints the
#       program, reduced. The last line is "N passed, M failed". Long mode (--minutes M): batches
#       of N, seeds S, S+1, ..., until M minutes have passed.
#   scripts/fuzz.sh rewriter [SECONDS]
#       libFuzzer on the rewriter (build-fuzz/, -fsanitize=fuzzer,address), seeded with the e2e
#       corpus, the rewriter's test inputs, the samples and 40 generated programs; 3600 s by
#       default. Failing inputs are written to build-fuzz/artifacts/: each one becomes a test
#       in tests/rewriter/ (and a seed of the next run).
set -euo pipefail
source "$(dirname "$0")/setup.sh"

usage() { sed -n '3,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//' >&2; exit 2; }

fuzz_rewriter() {
  local seconds=${1:-3600}
  local dir="$AG_ROOT/build-fuzz"
  ag_install_packages "${AG_PACKAGES[@]}" libclang-rt-19-dev
  ag_configure "$dir" -DAG_FUZZ=ON -DAG_BUILD_TESTS=OFF -DAG_BUILD_BENCH=OFF -DAG_BUILD_SAMPLES=OFF \
    -DAG_NATIVE_ARCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
  ag_build "$dir" ag-rewrite-fuzzer
  mkdir -p "$dir/corpus" "$dir/seeds" "$dir/artifacts"
  local source f
  for source in tests/e2e/corpus tests/rewriter/golden tests/rewriter/diagnostics samples; do
    for f in "$AG_ROOT/$source"/*.cpp; do
      [ -e "$f" ] && cp "$f" "$dir/seeds/${source//\//_}_$(basename "$f")"
    done
  done
  # Generated programs: nesting and jumps that no hand-written seed has.
  python3 "$AG_ROOT/tests/fuzz/programs/fuzz_programs.py" --count 40 --seed 1 --write-sources "$dir/seeds"
  ag_log "fuzzing the rewriter for $seconds s (corpus: $dir/corpus, failing inputs: $dir/artifacts)"
  # Leak checking is off: Clang never frees what its ASTContext allocates (APValue storage,
  # deduction-failure details), by design; the rewriter's own leaks are checked by
  # ./test.sh --asan, which runs ag-rewrite on every test input.
  (cd "$dir" && ASAN_OPTIONS=detect_leaks=0 ./tools/ag-rewrite-fuzzer -timeout=20 -rss_limit_mb=4096 \
     -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$dir/artifacts/" corpus seeds)
}

fuzz_programs() {
  [ $# -ge 1 ] || usage
  ag_install_packages "${AG_PACKAGES[@]}"
  ag_configure "$AG_BUILD_DIR" -DAG_BUILD_TESTS=ON
  ag_build "$AG_BUILD_DIR"
  exec python3 "$AG_ROOT/tests/fuzz/programs/fuzz_programs.py" --count "$@"
}

case "${1:-}" in
  rewriter) shift; fuzz_rewriter "$@" ;;
  programs) shift; fuzz_programs "$@" ;;
  *) usage ;;
esac
