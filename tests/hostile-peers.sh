#!/usr/bin/env bash
# Hostile and confused peers connect to a running job's ports (pinned with FERRY_PORT_RANGE):
# every such connection must be refused and logged, and the job must finish correctly.
set -uo pipefail
cd "$(dirname "$0")/.."
FERRY=${FERRY:-target/release/ferry}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin/mpicc -O2 -Wall -o "$work/victim" tests/hostile/victim.c || { echo "FAIL hostile-peers: compile"; echo "0 passed, 1 failed"; exit 1; }
lo=$(( 42000 + RANDOM % 2000 )); hi=$(( lo + 7 ))
export FERRY_TEST_READY="$work/ready" FERRY_TEST_GO="$work/go" FERRY_PORT_RANGE="$lo:$hi"
"$FERRY" run -n 4 --timeout 60 "$work/victim" >"$work/out" 2>"$work/err" &
job=$!
for _ in $(seq 1 500); do [ -e "$work/ready" ] && break; sleep 0.02; done
python3 tests/hostile/attack.py "$lo" "$hi" 4 >"$work/attack" 2>&1
attack_rc=$?
touch "$work/go"
wait $job
rc=$?
pass=0; fail=0
check() { if eval "$2"; then echo "ok   hostile-peers: $1"; pass=$((pass+1)); else echo "FAIL hostile-peers: $1"; fail=$((fail+1)); fi; }
check "attacker reached every rank's port" "[ $attack_rc = 0 ]"
check "job exits 0 after the attack" "[ $rc = 0 ]"
check "ring intact" "grep -q 'ring intact' '$work/out'"
check "refusals are logged" "grep -q 'refused connection' '$work/err'"
check "wrong proofs are named" "grep -q 'wrong job secret' '$work/err'"
if [ $fail -gt 0 ]; then echo "--- stdout"; cat "$work/out"; echo "--- stderr"; tail -20 "$work/err"; cat "$work/attack"; fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
