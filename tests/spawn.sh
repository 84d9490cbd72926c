#!/usr/bin/env bash
# Spawn and names under `ferry run` on this host (docs/dynamic.md): tests/dynamic/spawn.c in
# each of its cases — 1 to 8 children, spawn_multiple of two programs, nested spawn, the
# failures (a missing program, more than MPI_UNIVERSE_SIZE, another host), no parent in a
# plain job, publish/lookup/unpublish also from a child, a child killed by a signal (ferry run
# stops the run and says which job), ferry run itself killed with SIGKILL (no child survives),
# a singleton (it starts a ferry run for its children; it has no name service), a job under
# MPICH's Hydra (MPI_ERR_SPAWN), and MPI_Comm_join of two singletons over a socketpair
# (tests/dynamic/join.c). Each case must finish within LIMIT seconds (default 60);
# afterwards no process of the test and none of its jobs' shared-memory objects may remain.
# Usage: tests/spawn.sh [FILTER]   (FILTER matches a case name; needs `make build`)
set -u
cd "$(dirname "$0")/.." || exit 2
FERRY=${FERRY:-target/release/ferry}
LIMIT=${LIMIT:-60}
filter=${1:-}
[ -e lib/libmpi.so.12 ] || { echo "FAIL spawn: Ferry is not built (make build)"; exit 1; }
work=$(mktemp -d /tmp/ferry-spawn.XXXXXX)
trap 'rm -rf "$work"' EXIT
bin/mpicc -O2 -o "$work/spawn" tests/dynamic/spawn.c && bin/mpicc -O2 -DWHO='"second"' -o "$work/spawn2" tests/dynamic/spawn.c \
  && bin/mpicc -O2 -o "$work/join" tests/dynamic/join.c \
  || { echo "FAIL spawn: cannot compile tests/dynamic/spawn.c"; exit 1; }
prog="$work/spawn"
# name | ranks | arguments | lines "spawn <x>: ok" expected
cases=(
  "basic-1|1|basic 1|2"
  "basic-2|1|basic 2|3"
  "basic-3-from-2|2|basic 3|5"
  "basic-4|1|basic 4|5"
  "basic-8|2|basic 8|10"
  "multiple|2|multiple $work/spawn2|5"
  "nested|2|nested|4"
  "fail|2|fail|3"
  "plain|3|plain|3"
  "names|2|names|3"
)
pids=()
pass=0 fail=0
ok() { printf 'ok   spawn: %s\n' "$*"; pass=$((pass + 1)); }
bad() { echo "FAIL spawn: $1"; [ -n "${2:-}" ] && sed 's/^/  /' "$2" | tail -20; fail=$((fail + 1)); }
want() { [ -z "$filter" ] || [[ "$1" == *"$filter"* ]]; }
for c in "${cases[@]}"; do
  IFS='|' read -r name ranks args lines <<< "$c"
  want "$name" || continue
  out="$work/$name.out"
  # exec: the launcher's pid, which names its jobs' shared memory (kvs_<pid>_<job>), is $!.
  ( exec "$FERRY" run --universe-size 16 --timeout "$LIMIT" -n "$ranks" "$prog" $args ) > "$out" 2>&1 &
  pid=$!
  pids+=("$pid")
  wait $pid
  rc=$?
  got=$(grep -c ": ok$" "$out")
  if [ $rc = 0 ] && [ "$got" = "$lines" ]; then
    ok "$name $(grep -o '[0-9]* children in [0-9.]* s' "$out" | head -1)"
  else
    bad "$name (exit $rc, $got of $lines ok lines)" "$out"
  fi
done
if want crash; then
  ( exec "$FERRY" run --universe-size 16 --timeout "$LIMIT" -n 2 "$prog" crash ) > "$work/crash.out" 2>&1 &
  pid=$!; pids+=("$pid"); wait $pid; rc=$?
  if [ $rc = 137 ] && grep -q "spawned job 1: rank [01] .* was killed by signal 9" "$work/crash.out"; then
    ok "crash (a killed child stops the run: exit $rc)"
  else
    bad "crash (exit $rc)" "$work/crash.out"
  fi
fi
if want hang; then
  ( exec "$FERRY" run --universe-size 16 -n 2 "$prog" hang ) > "$work/hang.out" 2>&1 &
  pid=$!; pids+=("$pid")
  for _ in $(seq 100); do grep -q "children up" "$work/hang.out" && break; sleep 0.1; done
  n=$(pgrep -f "$prog" | wc -l)
  kill -9 "$pid"; wait "$pid" 2>/dev/null
  for _ in $(seq 20); do pgrep -f "$prog" >/dev/null || break; sleep 0.1; done
  # ferry run, its 2 ranks and their 2 children.
  if [ "$n" = 5 ] && ! pgrep -f "$prog" >/dev/null; then
    ok "hang (ferry run killed with SIGKILL: its 2 ranks and 2 children are gone)"
  else
    bad "hang ($n processes before the kill; left: $(pgrep -f "$prog" | tr '\n' ' '))" "$work/hang.out"
  fi
fi
# A singleton starts a ferry run for its children; it has no name service.
for c in "singleton-basic-3|basic 3|2" "singleton-fail|fail|2" "singleton-nonames|nonames|1"; do
  IFS='|' read -r name args lines <<< "$c"
  want "$name" || continue
  FERRY_UNIVERSE_SIZE=4 timeout "$LIMIT" "$prog" $args > "$work/$name.out" 2>&1
  rc=$?
  got=$(grep -c ": ok$" "$work/$name.out")
  # The parent's own line, and one per child.
  [ "$name" = singleton-basic-3 ] && lines=4
  if [ $rc = 0 ] && [ "$got" = "$lines" ]; then
    ok "$name $(grep -o '[0-9]* children in [0-9.]* s' "$work/$name.out" | head -1)"
  else
    bad "$name (exit $rc, $got of $lines ok lines)" "$work/$name.out"
  fi
done
HYDRA=${HYDRA:-mpiexec.mpich}
if want hydra && command -v "$HYDRA" >/dev/null; then
  if timeout "$LIMIT" "$HYDRA" -n 2 "$prog" nolauncher > "$work/hydra.out" 2>&1 && [ "$(grep -c ': ok$' "$work/hydra.out")" = 2 ]; then
    ok "hydra (spawn under $HYDRA is MPI_ERR_SPAWN at once)"
  else
    bad "hydra" "$work/hydra.out"
  fi
fi
if want join; then
  if timeout "$LIMIT" "$work/join" > "$work/join.out" 2>&1 && [ "$(grep -c ': ok$' "$work/join.out")" = 2 ]; then
    ok "join (two singletons over a socketpair)"
  else
    bad "join" "$work/join.out"
  fi
fi
left=$(pgrep -f "$work/" || true)
if [ -n "$left" ]; then
  bad "processes left behind: $left"
  kill -9 $left 2>/dev/null
fi
new_shm=$(for p in "${pids[@]}"; do ls /dev/shm 2>/dev/null | grep "kvs_${p}_" || true; done)
[ -z "$new_shm" ] || bad "shared-memory objects left behind: $new_shm"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
