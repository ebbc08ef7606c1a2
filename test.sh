#!/usr/bin/env bash
# Builds agc and runs every test.   ./test.sh [--asan | --tsan] [ctest args...]
#   --asan   build in build-asan/ with AddressSanitizer + UndefinedBehaviorSanitizer
#   --tsan   build in build-tsan/ with ThreadSanitizer (suppressions: tests/tsan.supp)
#   CXX=g++ ./test.sh   builds with another compiler, in build-g++/
# A full run (no ctest arguments) also builds and tests the interpreter-only configuration
# (-DAG_WITH_LLVM=OFF) in build-nollvm/.
set -euo pipefail
source "$(dirname "$0")/scripts/setup.sh"

build_dir="$AG_BUILD_DIR"
cmake_args=(-DAG_BUILD_TESTS=ON)
# Graphviz and Chromium: the HTML report's tests draw graphs with dot and load the page in
# headless Chromium (skipped, not passed, where they are missing).
packages=("${AG_PACKAGES[@]}" graphviz chromium)
ctest_args=()
sanitized=false
for arg in "$@"; do
  if [ "$arg" = --asan ]; then
    build_dir="$AG_BUILD_DIR-asan"
    sanitized=true
    cmake_args+=(-DAG_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAG_BUILD_BENCH=OFF)
    packages+=(libclang-rt-19-dev)
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
  elif [ "$arg" = --tsan ]; then
    build_dir="$AG_BUILD_DIR-tsan"
    sanitized=true
    cmake_args+=(-DAG_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAG_BUILD_BENCH=OFF)
    packages+=(libclang-rt-19-dev)
    # A report fails its test (exit code 66); allocator_may_return_null: the out-of-memory tests
    # ask for 4 TiB and expect ag::ResourceExhaustedError, not TSan's own abort. die_after_fork=0:
    # the fork tests' children start threads (a fresh pool, a compile thread), which TSan would
    # otherwise refuse in a child of a multithreaded process.
    export TSAN_OPTIONS=${TSAN_OPTIONS:-"halt_on_error=1 exitcode=66 second_deadlock_stack=1 allocator_may_return_null=1 die_after_fork=0 suppressions=$AG_ROOT/tests/tsan.supp"}
  else
    ctest_args+=("$arg")
  fi
done

ag_install_packages "${packages[@]}"
ag_configure "$build_dir" "${cmake_args[@]}"
ag_build "$build_dir"
# Tests must not read or pollute the user's code cache.
export AG_CACHE_DIR="$build_dir/test-cache"
ag_log "running tests"
(cd "$build_dir" && ctest --output-on-failure -j "$AG_JOBS" "${ctest_args[@]}")

# The interpreter-only build: no LLVM, so no JIT, no ag-rewrite, no samples; the runtime tests
# it has must pass (the runtime objects mostly come from the compiler cache).
if [ ${#ctest_args[@]} -eq 0 ] && [ "$sanitized" = false ]; then
  nollvm_dir="$build_dir-nollvm"
  ag_configure "$nollvm_dir" -DAG_WITH_LLVM=OFF -DAG_BUILD_TESTS=ON -DAG_BUILD_BENCH=OFF
  ag_build "$nollvm_dir"
  ag_log "running the tests of the interpreter-only build (AG_WITH_LLVM=OFF: no JIT, ag-rewrite or samples)"
  (cd "$nollvm_dir" && AG_CACHE_DIR="$nollvm_dir/test-cache" ctest --output-on-failure -j "$AG_JOBS")
fi
