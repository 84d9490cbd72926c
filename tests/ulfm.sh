#!/usr/bin/env bash
# Fault-tolerant MPI (docs/fault-tolerance.md): the programs of tests/ulfm, each run by
# `ferry run --enable-recovery` with the ranks its `/* ranks: N */` line names (default 4).
# In each, one rank kills itself (SIGKILL) and the others go on: a case passes when every
# survivor prints "ULFM-OK", the launcher names the dead rank and exits non-zero (a rank
# died), all within the time limit.
# Usage: tests/ulfm.sh [FILTER...]   (needs `make build`)
set -u
cd "$(dirname "$0")/.." || exit 2
FERRY=${FERRY:-target/release/ferry}
LIMIT=${LIMIT:-30}
[ -e lib/libmpi.so.12 ] || { echo "FAIL ulfm: Ferry is not built (make build)"; exit 1; }
work=$(mktemp -d /tmp/ferry-ulfm.XXXXXX)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
for src in tests/ulfm/*.c; do
  name=$(basename "$src" .c)
  if [ $# -gt 0 ]; then
    hit=0
    for f in "$@"; do [[ $name == *"$f"* ]] && hit=1; done
    [ $hit = 1 ] || continue
  fi
  np=$(sed -n 's|^/\* ranks: \([0-9]*\) \*/.*|\1|p' "$src" | head -1)
  np=${np:-4}
  if ! bin/mpicc -O2 -Wall -o "$work/$name" "$src" 2>"$work/$name.cc"; then
    echo "FAIL $name: does not compile"; sed 's/^/  /' "$work/$name.cc"; fail=$((fail + 1)); continue
  fi
  start=$(date +%s.%N)
  "$FERRY" run -n "$np" --enable-recovery --timeout "$LIMIT" "$work/$name" >"$work/$name.out" 2>"$work/$name.err"
  rc=$?
  secs=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.2f", a - b }')
  oks=$(grep -c '^ULFM-OK' "$work/$name.out")
  want=$(sed -n 's|^/\* survivors: \([0-9]*\) \*/.*|\1|p' "$src" | head -1)
  want=${want:-$((np - 1))}
  why=""
  [ "$rc" = 0 ] && why="exit status 0 (a rank died: wanted a failure)"
  [ "$rc" = 124 ] && why="timed out after $LIMIT s"
  [ "$oks" = "$want" ] || why="${why:+$why; }$oks of $want survivors printed ULFM-OK"
  grep -q "recovery enabled" "$work/$name.err" || why="${why:+$why; }the launcher did not name the dead rank"
  if [ -z "$why" ]; then
    echo "ok   $name -n $np ($secs s)"; pass=$((pass + 1))
  else
    echo "FAIL $name -n $np: $why"; sed 's/^/  out: /' "$work/$name.out" | tail -8; sed 's/^/  err: /' "$work/$name.err" | tail -12
    fail=$((fail + 1))
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
