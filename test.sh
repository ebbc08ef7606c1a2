#!/usr/bin/env bash
# Builds agc and runs every test.   ./test.sh [--asan] [ctest args...]
#   --asan   build in build-asan/ with AddressSanitizer + UndefinedBehaviorSanitizer
#   CXX=g++ ./test.sh   builds with another compiler, in build-g++/
set -euo pipefail
source "$(dirname "$0")/scripts/setup.sh"

build_dir="$AG_BUILD_DIR"
cmake_args=()
packages=("${AG_PACKAGES[@]}")
ctest_args=()
for arg in "$@"; do
  if [ "$arg" = --asan ]; then
    build_dir="$AG_BUILD_DIR-asan"
    cmake_args+=(-DAG_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DAG_BUILD_BENCH=OFF)
    packages+=(libclang-rt-19-dev)
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
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
cd "$build_dir"
ctest --output-on-failure -j "$AG_JOBS" "${ctest_args[@]}"
