#!/usr/bin/env bash
# Coverage-guided fuzzing of every parser of untrusted bytes (make test-long).
# FUZZ_SECONDS per target (default 60).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-60}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
targets=$(cd fuzz && cargo +nightly fuzz list)
pass=0; fail=0
for t in $targets; do
  if (cd fuzz && cargo +nightly fuzz run "$t" -- -max_total_time="$secs" >"/tmp/fuzz-$t.log" 2>&1); then
    echo "ok   fuzz $t (${secs}s)"; pass=$((pass+1))
  else
    echo "FAIL fuzz $t: see /tmp/fuzz-$t.log"; tail -20 "/tmp/fuzz-$t.log"; fail=$((fail+1))
  fi
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
