#!/usr/bin/env bash
# Dynamic processes between two jobs on this host (docs/dynamic.md): tests/dynamic/port_pair.c
# as a server that opens a port and accepts and a client that connects, for each pairing of
# `ferry run` jobs of 1-3 ranks and singletons (a program started without a launcher). Each pair
# must finish within LIMIT seconds (default 60), both sides reporting ok, and leave no process
# and none of their shared-memory objects behind.
# Usage: tests/dynamic.sh [FILTER]   (FILTER matches a case name; needs `make build`)
set -u
cd "$(dirname "$0")/.." || exit 2
FERRY=${FERRY:-target/release/ferry}
LIMIT=${LIMIT:-60}
filter=${1:-}
[ -e lib/libmpi.so.12 ] || { echo "FAIL dynamic: Ferry is not built (make build)"; exit 1; }
work=$(mktemp -d /tmp/ferry-dynamic.XXXXXX)
trap 'rm -rf "$work"' EXIT
bin/mpicc -O2 -o "$work/port_pair" tests/dynamic/port_pair.c || { echo "FAIL dynamic: cannot compile tests/dynamic/port_pair.c"; exit 1; }
# case name, server ranks, client ranks (0: a singleton)
cases=(
  "job2-job3 2 3"
  "job1-job1 1 1"
  "job2-singleton 2 0"
  "singleton-job2 0 2"
  "singleton-singleton 0 0"
)
# A job's shared-memory objects are named after its launcher's pid (kvs_<pid>_0): each job is
# started with exec, so that pid is the one $! gives.
launch() { # ranks role file
  if [ "$1" = 0 ]; then exec timeout "$LIMIT" "$work/port_pair" "$2" "$3"
  else exec "$FERRY" run --timeout "$LIMIT" -n "$1" "$work/port_pair" "$2" "$3"; fi
}
pids=()
pass=0 fail=0
for c in "${cases[@]}"; do
  set -- $c
  name=$1
  [ -n "$filter" ] && [[ "$name" != *"$filter"* ]] && continue
  port="$work/$name.port"
  start=$(date +%s.%N)
  ( launch "$2" server "$port" ) > "$work/$name.server" 2>&1 &
  spid=$!
  ( launch "$3" client "$port" ) > "$work/$name.client" 2>&1 &
  cpid=$!
  pids+=("$spid" "$cpid")
  wait $cpid
  crc=$?
  wait $spid
  src=$?
  secs=$(echo "$(date +%s.%N) - $start" | bc)
  if [ $src = 0 ] && [ $crc = 0 ] && grep -q "port_pair server: ok" "$work/$name.server" && grep -q "port_pair client: ok" "$work/$name.client"; then
    printf 'ok   dynamic: %s (%.2f s)\n' "$name" "$secs"
    pass=$((pass + 1))
  else
    echo "FAIL dynamic: $name (server exit $src, client exit $crc)"
    sed 's/^/  server: /' "$work/$name.server" | tail -20
    sed 's/^/  client: /' "$work/$name.client" | tail -20
    fail=$((fail + 1))
  fi
done
left=$(pgrep -f "$work/port_pair" || true)
if [ -n "$left" ]; then
  echo "FAIL dynamic: processes left behind: $left"
  fail=$((fail + 1))
fi
new_shm=$(for p in "${pids[@]}"; do ls /dev/shm 2>/dev/null | grep "kvs_${p}_" || true; done)
if [ -n "$new_shm" ]; then
  echo "FAIL dynamic: shared-memory objects left behind: $new_shm"
  fail=$((fail + 1))
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
