# Shared set-up for ./run.sh and ./test.sh: install missing Debian packages, configure, build.
# Sourced, not executed. Everything here is idempotent and quiet when nothing is to be done.

AG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
AG_JOBS=${AG_JOBS:-2}
# Lets worktrees and fresh clones in different directories share compiler-cache hits.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$AG_ROOT}

# The packages agc builds with (Debian 12). TOOLCHAIN.md in the design notes explains each.
AG_PACKAGES=(cmake ninja-build ccache g++ clang-19 llvm-19-dev libclang-19-dev llvm-19-tools libclang-rt-19-dev
             libeigen3-dev libdlpack-dev libdnnl-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev python3-numpy
             pkgconf libopenmpi-dev openmpi-bin)

# The compiler (CXX, default clang++-19) and the build directory it builds into: build/ for the
# default compiler, build-<compiler>/ for another one (CXX=g++ -> build-g++/), so switching
# compilers never reuses a tree configured for the other one.
AG_CXX=${CXX:-clang++-19}
if [ "$AG_CXX" = clang++-19 ]; then AG_BUILD_DIR="$AG_ROOT/build"; else AG_BUILD_DIR="$AG_ROOT/build-$(basename "$AG_CXX")"; fi

# Bold headings on a terminal; plain text in CI logs and pipes.
if [ -t 2 ] && [ "${CI:-}" != true ]; then AG_BOLD=$'\033[1m' AG_PLAIN=$'\033[0m'; else AG_BOLD='' AG_PLAIN=''; fi
ag_log() { printf '%s==> %s%s\n' "$AG_BOLD" "$*" "$AG_PLAIN" >&2; }

ag_missing_packages() {
  local p missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  echo "${missing[@]}"
}

ag_install_packages() {
  local missing
  missing=$(ag_missing_packages "$@")
  [ -z "$missing" ] && return 0
  ag_log "installing Debian packages: $missing"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "agc: need root (or sudo) to install: $missing" >&2; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=600 $missing >/dev/null
}

# ag_configure <build-dir> [extra cmake args...]: configure once (a tree configured for another
# compiler is refused rather than silently reused).
ag_configure() {
  local dir=$1; shift
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  if [ -f "$dir/build.ninja" ]; then
    local configured
    configured=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$dir/CMakeCache.txt" 2>/dev/null)
    if [ -n "$configured" ] && [ "$(basename "$configured")" != "$(basename "$AG_CXX")" ] &&
       [ "$configured" != "$(command -v "$AG_CXX" 2>/dev/null)" ]; then
      echo "agc: $dir was configured with $configured, not $AG_CXX; remove it or pick its compiler" >&2
      exit 2
    fi
    return 0
  fi
  ag_log "configuring $dir (compiler: $AG_CXX)"
  cmake -S "$AG_ROOT" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$AG_CXX" "${launcher[@]}" "$@" >/dev/null
}

# ag_build <build-dir> [targets...]: build incrementally (everything when no target is named).
ag_build() {
  local dir=$1; shift
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  ag_log "building $dir"
  cmake --build "$dir" -j "$AG_JOBS" "${targets[@]}"
}
