#!/usr/bin/env bash
# The faces (MPI, MCAPI) start from a job (ferry_core::Job) and talk to the engine: they must
# not reach down to the transports, the PMI client or the event loop (STYLE.md 1, DESIGN.md
# "Bootstrap makes a job"), so that both share the same start-up.
set -euo pipefail
cd "$(dirname "$0")/.."
# Paths into the lower modules, also inside a grouped `use ferry_core::{...}`, and the
# transports' own module paths however they were brought into scope.
pattern='ferry_core::(transport|bootstrap)|ferry_core::\{[^}]*\b(transport|bootstrap)\b|PmiClient|\bmio::|(^|[^A-Za-z0-9_])(tcp|shm)::'
for dir in crates/ferry-mpi/src crates/ferry-mcapi/src; do
  if hits=$(grep -rnE "$pattern" "$dir"); then
    echo "FAIL layers: $dir reaches below the engine and the job API:"
    echo "$hits" | sed 's/^/  /'
    exit 1
  fi
  echo "ok   layers: $dir uses only the job and engine APIs of ferry-core"
done
