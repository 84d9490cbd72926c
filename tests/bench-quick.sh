#!/usr/bin/env bash
# ferry bench end to end: `ferry bench --quick` builds and runs every benchmark program under
# Ferry and writes results.csv, results.json, the figures and summary.md; this checks them
# (python3 reads the results as ferry fit would: 8 fields, finite numbers, min <= median <=
# max) and the failure paths: an unknown benchmark and a bad --sizes are refused with a
# clear message, an --mpi whose compiler does not exist is left out, and a run that fails
# is reported while the others still count.
#
# usage: tests/bench-quick.sh      (after make build; FERRY overrides target/release/ferry)

set -u
cd "$(dirname "$0")/.." || exit 2
FERRY=${FERRY:-target/release/ferry}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

failures=0
fail() {
    echo "bench-quick: FAIL: $*" >&2
    failures=$((failures + 1))
}
pass() { echo "bench-quick: ok: $*"; }

# ---- the quick run and what it writes ------------------------------------------------

start=$(date +%s)
if "$FERRY" bench --quick --out "$tmp/out" --plot "$tmp/plot" > "$tmp/quick.out" 2> "$tmp/quick.err"; then
    pass "ferry bench --quick exited 0 in $(($(date +%s) - start)) s"
else
    fail "ferry bench --quick exited $?; its stderr:"
    sed 's/^/    /' "$tmp/quick.err" >&2
fi

prtt=0
[ -f bench/prtt.c ] && prtt=1
if python3 - "$tmp" "$prtt" <<'EOF'
import json, math, os, sys

tmp, with_prtt = sys.argv[1], sys.argv[2] == "1"
out, plot = os.path.join(tmp, "out"), os.path.join(tmp, "plot")
problems = []

header = "implementation,benchmark,ranks,size,median,min,max,runs"
lines = open(os.path.join(out, "results.csv")).read().splitlines()
if not lines or lines[0] != header:
    problems.append(f"results.csv: header {lines[:1]}")
rows = []
for n, line in enumerate(lines[1:], start=2):
    f = line.split(",")
    if len(f) != 8:
        problems.append(f"results.csv line {n}: {len(f)} fields")
        continue
    try:
        ranks, size, runs = int(f[2]), int(f[3]), int(f[7])
        med, lo, hi = float(f[4]), float(f[5]), float(f[6])
    except ValueError as e:
        problems.append(f"results.csv line {n}: {e}")
        continue
    if not all(math.isfinite(v) and v >= 0 for v in (med, lo, hi)):
        problems.append(f"results.csv line {n}: not finite or negative: {line}")
    if not lo <= med <= hi:
        problems.append(f"results.csv line {n}: min <= median <= max fails: {line}")
    if f[0] != "ferry" or ranks != 2 or runs < 1 or runs > 2:
        problems.append(f"results.csv line {n}: expected ferry, 2 ranks, 1-2 runs: {line}")
    rows.append((f[0], f[1], ranks, size, med, lo, hi, runs))

data = json.load(open(os.path.join(out, "results.json")))
as_json = [(r["implementation"], r["benchmark"], r["ranks"], r["size"], r["median"], r["min"], r["max"], r["runs"]) for r in data]
if as_json != rows:
    problems.append("results.json and results.csv differ")

expected = ["latency", "bandwidth", "bibandwidth"]
expected += [f"{c}.{s}" for c in ("barrier", "bcast", "scatter", "gather", "allgather", "alltoall",
                                  "reduce", "allreduce", "reduce_scatter", "scan", "exscan")
             for s in ("min", "avg", "max")]
expected += ["shift.total", "shift.nonoverlap", "shift.overlap"]
expected += ["jacobi.overlap", "jacobi.blocking", "jacobi.interior", "jacobi.boundary"]
if with_prtt:
    expected += ["prtt.1", "prtt.n", "prtt.nd", "prtt.d"]
present = {r[1] for r in rows}
missing = [b for b in expected if b not in present]
if missing:
    problems.append(f"benchmarks missing from the results: {missing}")

for b in sorted(present):
    for ext in ("svg", "png"):
        p = os.path.join(plot, f"{b}.n2.{ext}")
        if not os.path.isfile(p) or os.path.getsize(p) == 0:
            problems.append(f"no {p}")
        elif ext == "png" and open(p, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
            problems.append(f"{p} does not start with the PNG signature")
        elif ext == "svg" and "<svg" not in open(p).read(512):
            problems.append(f"{p} is not SVG")
summary = os.path.join(plot, "summary.md")
if not os.path.isfile(summary):
    problems.append("no summary.md")
else:
    text = open(summary).read()
    for b in ("latency", "shift.total", "jacobi.overlap", "allreduce.avg"):
        if f"## {b}, 2 ranks" not in text:
            problems.append(f"summary.md has no section for {b}")

for p in problems:
    print(f"    {p}", file=sys.stderr)
print(f"{len(rows)} rows, {len(present)} benchmarks")
sys.exit(1 if problems else 0)
EOF
then
    pass "results.csv, results.json, figures and summary.md are complete and well formed"
else
    fail "the quick run's output (above)"
fi

# ---- what must be refused or left out ---------------------------------------------------

# expect_refusal WHAT PATTERN ARGS...: ferry bench ARGS exits non-zero and says PATTERN.
expect_refusal() {
    local what=$1 pattern=$2
    shift 2
    if "$FERRY" bench "$@" > "$tmp/refused.out" 2> "$tmp/refused.err"; then
        fail "$what: exited 0"
    elif ! grep -q -- "$pattern" "$tmp/refused.err"; then
        fail "$what: no \"$pattern\" in its message:"
        sed 's/^/    /' "$tmp/refused.err" >&2
    else
        pass "$what: refused ($(head -n 1 "$tmp/refused.err"))"
    fi
}
expect_refusal "an unknown benchmark" 'unknown benchmark "nosuch"' --quick --benchmarks latency,nosuch --out "$tmp/x"
expect_refusal "a reversed --sizes" "MIN is above MAX" --quick --sizes 64K..1 --out "$tmp/x"
expect_refusal "a --sizes with a bad suffix" "expected a byte count" --quick --sizes 1..4Q --out "$tmp/x"
[ -e "$tmp/x" ] && fail "a refused command wrote $tmp/x"

if "$FERRY" bench --quick --benchmarks latency --impl ferry,ghost \
    --mpi ghost=/nonexistent/mpicc,/nonexistent/mpiexec --out "$tmp/ghost" \
    > "$tmp/ghost.out" 2> "$tmp/ghost.err"; then
    if grep -q "ghost: left out, /nonexistent/mpicc not found" "$tmp/ghost.err" &&
        ! grep -q "^ghost," "$tmp/ghost/results.csv" && grep -q "^ferry,latency," "$tmp/ghost/results.csv"; then
        pass "an --mpi without its compiler is reported and left out"
    else
        fail "an --mpi without its compiler: not reported, or in the results"
        sed 's/^/    /' "$tmp/ghost.err" >&2
    fi
else
    fail "an --mpi without its compiler: exited $?"
    sed 's/^/    /' "$tmp/ghost.err" >&2
fi

# A launcher that always fails: its runs are reported, Ferry's still count, exit status 1.
"$FERRY" bench --quick --benchmarks latency --runs 1 --impl ferry,broken \
    --mpi "broken=$PWD/bin/mpicc,false" --out "$tmp/broken" > "$tmp/broken.out" 2> "$tmp/broken.err"
status=$?
if [ $status -eq 1 ] && grep -q "FAILED: latency on 2 ranks, run 1/1, broken: exit status 1" "$tmp/broken.err" &&
    grep -q "command: false -n 2 " "$tmp/broken.err" && grep -q "^ferry,latency," "$tmp/broken/results.csv"; then
    pass "a failing run is reported with its command, the others are kept, exit status 1"
else
    fail "a failing run (exit status $status):"
    sed 's/^/    /' "$tmp/broken.err" >&2
fi

if [ $failures -gt 0 ]; then
    echo "bench-quick: $failures check(s) failed" >&2
    exit 1
fi
echo "bench-quick: all checks passed"
