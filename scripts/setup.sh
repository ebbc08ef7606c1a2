# Shared set-up for ./run.sh and ./test.sh: install missing Debian packages, configure, build.
# Sourced, not executed. Everything here is idempotent and quiet when nothing is to be done.

AG_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
AG_JOBS=${AG_JOBS:-2}
# Lets worktrees and fresh clones in different directories share compiler-cache hits.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$AG_ROOT}

# The packages agc builds with (Debian 12). TOOLCHAIN.md in the design notes explains each.
AG_PACKAGES=(cmake ninja-build ccache g++ clang-19 llvm-19-dev libclang-19-dev llvm-19-tools
             libeigen3-dev libfmt-dev libgtest-dev libgmock-dev libbenchmark-dev graphviz)

ag_log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

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
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    -o DPkg::Lock::Timeout=600 $missing >/dev/null
}

# ag_build <build-dir> [extra cmake args...]: configure once, then build incrementally.
ag_build() {
  local dir=$1; shift
  local cxx=${CXX:-clang++-19}
  local launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  if [ ! -f "$dir/build.ninja" ]; then
    ag_log "configuring $dir (compiler: $cxx)"
    cmake -S "$AG_ROOT" -B "$dir" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" "$@" >/dev/null
  fi
  ag_log "building $dir"
  cmake --build "$dir" -j "$AG_JOBS"
}
