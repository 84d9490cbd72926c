#!/usr/bin/env bash
# The MPI face starts from a job (ferry_core::Job) and talks to the engine: it must not reach
# down to the transports, the PMI client or the event loop (STYLE.md 1, DESIGN.md "Bootstrap
# makes a job"), so that the MCAPI face can share the same start-up.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=crates/ferry-mpi/src
# Paths into the lower modules, also inside a grouped `use ferry_core::{...}`, and the
# transports' own module paths however they were brought into scope.
pattern='ferry_core::(transport|bootstrap)|ferry_core::\{[^}]*\b(transport|bootstrap)\b|PmiClient|\bmio::|(^|[^A-Za-z0-9_])(tcp|shm)::'
if hits=$(grep -rnE "$pattern" "$dir"); then
  echo "FAIL layers: $dir reaches below the engine and the job API:"
  echo "$hits" | sed 's/^/  /'
  exit 1
fi
echo "ok   layers: $dir uses only the job and engine APIs of ferry-core"
