#!/bin/bash
# Instructions one cached call executes (W4: x + 1 on one element, output included), by function:
# callgrind counts two runs of build/bench/jit/cached_call_loop (1000 and 11000 calls) and the
# difference is divided by 10000, so the compile and start-up cancel out. Deterministic, unlike a
# timer: docs/performance.md ("W4: the cached-call path") has the table it printed.
#   bench/jit/call_path_instructions.sh [build dir, default build]
set -euo pipefail
build=${1:-build}
loop="$build/bench/jit/cached_call_loop"
[[ -x "$loop" ]] || { echo "no $loop: build the benchmarks first (./run.sh or ./test.sh)" >&2; exit 1; }
if ! command -v valgrind >/dev/null; then
  echo "installing valgrind (callgrind counts the instructions)" >&2
  apt-get install -y valgrind >/dev/null
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for n in 1000 11000; do
  AG_CACHE_DIR=off AG_JIT_WARMUP=0 valgrind --tool=callgrind --callgrind-out-file="$out/cg.$n" "$loop" "$n" >/dev/null 2>&1
done
python3 - "$out/cg.1000" "$out/cg.11000" <<'PY'
import re, subprocess, sys
def per_function(path):
    text = subprocess.run(["callgrind_annotate", "--threshold=100", path], capture_output=True, text=True).stdout
    counts = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)", line)
        if m:
            counts[m.group(2)] = int(m.group(1).replace(",", ""))
    return counts
a, b = per_function(sys.argv[1]), per_function(sys.argv[2])
rows = sorted(((b.get(k, 0) - a.get(k, 0)) / 10000, k) for k in set(a) | set(b))
print("| instructions per call | function |\n|---|---|")
for v, k in reversed(rows):
    if v >= 1:
        name = re.sub(r"\(std::span.*|\[/.*", "", k.replace("???:", "")).strip()
        if name.startswith("0x"):
            name = "the compiled code (JIT memory)"
        print(f"| {v:.0f} | {name[:100]} |")
PY
