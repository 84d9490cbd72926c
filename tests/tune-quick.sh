#!/usr/bin/env bash
# `ferry tune` measuring for real, as briefly as it can (2 ranks, barrier and bcast, one
# size, one run of a few milliseconds each): it exits 0, prints predicted against measured
# times with a prediction error for every cell, writes a table that `ferry info` shows as
# in force under FERRY_COLL_TABLE, and a job run with that table uses the tuned winner
# (FERRY_COLL_STATS=1). Needs `make build`.
#
# Prints one line per check and "N passed, M failed"; exits non-zero on any failure.

set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
FERRY=${FERRY:-target/release/ferry}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

passed=0
failed=0
ok() { echo "ok   tune: $1"; passed=$((passed + 1)); }
bad() { echo "FAIL tune: $1"; failed=$((failed + 1)); }

table="$out/tuned.table"
if timeout 120 "$FERRY" tune --ranks 2 --sizes 1K --collectives barrier,bcast --runs 1 \
        --seconds 0.01 -o "$table" > "$out/report" 2> "$out/err"; then
    ok "measured run exits 0"
else
    bad "measured run failed:"
    sed 's/^/    | /' "$out/err" | tail -n 20
fi
# Both cells measured: a time in both US columns and an error in percent.
cells=$(grep -cE '^  (barrier n=2 -|bcast n=2 1K) .* [0-9.]+ .* [0-9.]+ +[0-9.]+ +[-+][0-9]+% +(-|held .*|dropped .*)$' "$out/report")
if [ "$cells" = 2 ]; then ok "both cells measured and predicted"; else bad "report lacks measured cells:"; sed 's/^/    | /' "$out/report"; fi
if grep -q '^prediction error of the tuned choices: median' "$out/report"; then ok "prediction error summarised"; else bad "no prediction error summary"; fi
if head -n 3 "$table" 2>/dev/null | grep -q '^# machine: .*, [0-9]* cores$'; then ok "table says on which machine"; else bad "table header lacks the machine"; fi
if FERRY_COLL_TABLE="$table" "$FERRY" info | grep -q "^Decision table in force: file $table (FERRY_COLL_TABLE)$"; then
    ok "ferry info shows the tuned table in force"
else
    bad "ferry info does not show the tuned table"
fi
# The winner of bcast at 1K is the tuned row's first algorithm but a hierarchical one (which
# needs several hosts, and stays ahead when the built-in row has it); a job under the table
# runs it.
winner=$(awk '$1 == "bcast" && $2 == "2..3" { for (i = 4; i <= NF; i++) { a = $i; sub(/,/, "", a); if (a != "hier") { print a; exit } } }' "$table")
if [ -n "$winner" ] && FERRY_COLL_TABLE="$table" FERRY_COLL_STATS=1 timeout 60 "$FERRY" run -n 2 build/tune/coll \
        -c bcast -s 1K -i 10 -t 0.01 2>&1 >/dev/null | grep -q "coll-stats: bcast bcast.$winner bytes=1K-2K"; then
    ok "a job under the tuned table runs its winner (bcast.$winner)"
else
    bad "a job under the tuned table did not run the winner ${winner:-(none found)}"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
