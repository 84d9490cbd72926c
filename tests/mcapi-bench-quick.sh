#!/usr/bin/env bash
# The S4 benchmarks of the MCAPI library end to end, small: one round of every configuration
# of bench/mcapi.sh with few round trips and bytes, so that the programs keep building and
# running (the figures of such a run mean nothing). Checks that every run exited 0 and that
# the summary holds every table and the four target lines.
#
# usage: tests/mcapi-bench-quick.sh      (after make build)

set -u
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! bash bench/mcapi.sh -q -r 1 -i 200 -b 8M -n 2000 -T 2 -k 60 -o "$tmp" > "$tmp/log" 2>&1; then
    echo "mcapi-bench-quick: FAIL: bench/mcapi.sh exited non-zero:"
    tail -n 20 "$tmp/log" | sed 's/^/    /'
    exit 1
fi
fails=0
# runs.txt: round config bench seconds exit_status load...
bad=$(awk '!/^#/ && $5 != 0' "$tmp/runs.txt")
if [ -n "$bad" ]; then
    echo "mcapi-bench-quick: FAIL: runs that did not exit 0:"
    echo "$bad" | sed 's/^/    /'
    fails=1
fi
for want in "message latency, one way" "throughput (MB/s" "scalar channel" "packets tcp / raw stream" \
    "message latency tcp / raw ping-pong" "shm message 8 B latency" "shm packets / memcpy at 32 KiB"; do
    if ! grep -qF "$want" "$tmp/summary.txt"; then
        echo "mcapi-bench-quick: FAIL: summary.txt lacks \"$want\""
        fails=1
    fi
done
[ $fails = 0 ] && echo "mcapi-bench-quick: ok: every configuration ran, the summary has every table and target"
exit $fails
