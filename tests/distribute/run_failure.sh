#!/bin/bash
# run_failure.sh <mpiexec> <processes> <failure_check> <mode> zero|nonzero <pattern>...
# Runs one failure of failure_check.cpp under mpirun with a 1 s collective timeout and checks
# that the job ends by itself (never a hang: `timeout` would end it with 124), with the exit
# status asked for, and prints a line matching each pattern (extended regular expressions).
set -u
mpiexec=$1 np=$2 program=$3 mode=$4 want=$5
shift 5
start=$(date +%s)
out=$(AG_DISTRIBUTE_TIMEOUT=1 timeout 120 "$mpiexec" --allow-run-as-root --oversubscribe -np "$np" "$program" "$mode" 2>&1)
rc=$?
echo "$out"
echo "-- $mode on $np processes: exit status $rc after $(($(date +%s) - start)) s"
if [ "$rc" -eq 124 ]; then echo "FAIL: the job hung"; exit 1; fi
if [ "$want" = zero ] && [ "$rc" -ne 0 ]; then echo "FAIL: exit status $rc, expected 0"; exit 1; fi
if [ "$want" = nonzero ] && [ "$rc" -eq 0 ]; then echo "FAIL: exit status 0, expected a failed job"; exit 1; fi
for pattern in "$@"; do
  grep -qE -- "$pattern" <<<"$out" || { echo "FAIL: no line matches: $pattern"; exit 1; }
done
echo PASS
