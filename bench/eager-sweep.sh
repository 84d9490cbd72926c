#!/usr/bin/env bash
# How the eager limit shapes point-to-point performance over TCP: runs bench/latency and
# bench/bandwidth under Ferry for several FERRY_EAGER_LIMIT values, alternating the values
# run by run, and prints the median per size and limit (sizes around the limits only).
# usage: bench/eager-sweep.sh [-r ROUNDS] [LIMIT...]     (default: 3 rounds; 16k 64k 256k 1m)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=3
if [ "${1:-}" = -r ]; then rounds=$2; shift 2; fi
limits=("$@")
[ ${#limits[@]} -gt 0 ] || limits=(16k 64k 256k 1m)
FERRY=${FERRY:-target/release/ferry}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for b in latency bandwidth; do bin/mpicc -O2 -o "$out/$b" "bench/$b.c"; done
for r in $(seq 1 "$rounds"); do
  for l in "${limits[@]}"; do
    for b in latency bandwidth; do
      FERRY_EAGER_LIMIT=$l "$FERRY" run -n 2 --timeout 300 "$out/$b" -m 2M >"$out/$b.$l.$r" 2>&1
    done
  done
done
median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.2f\n", (a[NR/2]+a[NR/2+1])/2}'; }
for b in latency bandwidth; do
  [ $b = latency ] && echo "# $b (us, median of $rounds; lower is better)" || echo "# $b (MB/s, median of $rounds; higher is better)"
  printf "%-10s" size; for l in "${limits[@]}"; do printf "%12s" "eager=$l"; done; echo
  for size in 8192 16384 32768 65536 131072 262144 524288 1048576 2097152; do
    printf "%-10s" $size
    for l in "${limits[@]}"; do
      v=$(for r in $(seq 1 "$rounds"); do awk -v s=$size '$1=="ROW" && $4==s {print $5}' "$out/$b.$l.$r"; done | median)
      printf "%12s" "$v"
    done
    echo
  done
  echo
done
