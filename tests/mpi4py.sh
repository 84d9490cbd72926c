#!/usr/bin/env bash
# mpi4py's own test suite on Ferry (make test-long): fetches mpi4py's source release from PyPI,
# builds it with bin/mpicc into a virtual environment under build/mpi4py, and runs every test
# module of its suite under `ferry run -n N` (each module a job of its own, so one that aborts
# or hangs costs only its own tests). Prints one line per module and rank count, then the
# totals, as unittest counts them: tests run, failures, errors, skipped, and the modules whose
# job did not finish (crashed or timed out).
#
# Usage: tests/mpi4py.sh [-n "1 2"] [-v VERSION] [-t SECONDS] [MODULE-REGEX]
# Exit status: 0 when no test failed or errored and every job finished.
set -u
cd "$(dirname "$0")/.." || exit 2
repo=$PWD
ranks="1 2"
version=4.1.2
limit=300
while getopts "n:v:t:" opt; do
  case $opt in
    n) ranks=$OPTARG ;;
    v) version=$OPTARG ;;
    t) limit=$OPTARG ;;
    *) echo "usage: $0 [-n \"1 2\"] [-v VERSION] [-t SECONDS] [MODULE-REGEX]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
only=${1:-}
work=$repo/build/mpi4py
venv=$work/venv
src=$work/mpi4py-$version
mkdir -p "$work"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || exit 2
  "$venv/bin/pip" install -q wheel setuptools "cython>=3.0.1" || exit 2
fi
if [ ! -d "$src" ]; then
  "$venv/bin/pip" download -q --no-deps --no-binary=:all: "mpi4py==$version" -d "$work" || exit 2
  tar xzf "$work/mpi4py-$version.tar.gz" -C "$work" || exit 2
fi
# Built again whenever the library is newer than the build, so that mpi4py's configuration
# (which MPI functions exist) matches the library.
stamp=$work/built-$version
if [ ! -f "$stamp" ] || [ "$repo/lib/libmpi.so.12" -nt "$stamp" ]; then
  echo "mpi4py: building $version with bin/mpicc (a few minutes)"
  rm -rf "$src/build"
  (cd "$src" && MPICC="$repo/bin/mpicc" "$venv/bin/pip" install -q --no-build-isolation --force-reinstall --no-deps .) >"$work/build.log" 2>&1 ||
    { echo "FAIL mpi4py: the build failed (see $work/build.log)"; exit 1; }
  touch "$stamp"
fi

total_run=0 total_fail=0 total_err=0 total_skip=0 unfinished=""
for n in $ranks; do
  for file in "$src"/test/test_*.py; do
    module=$(basename "$file" .py)
    [ -n "$only" ] && ! [[ $module =~ $only ]] && continue
    log=$work/$module.$n.log
    (cd "$src/test" && timeout $((limit + 30)) "$repo/target/release/ferry" run -n "$n" --timeout "$limit" \
      "$venv/bin/python" main.py --no-builddir -i "^$module\.py\$") >"$log" 2>&1
    rc=$?
    ran=$(sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in.*/\1/p' "$log" | head -n 1)
    summary=$(grep -E '^(OK|FAILED)' "$log" | head -n 1)
    f=$(echo "$summary" | sed -n 's/.*failures=\([0-9]*\).*/\1/p')
    e=$(echo "$summary" | sed -n 's/.*errors=\([0-9]*\).*/\1/p')
    s=$(echo "$summary" | sed -n 's/.*skipped=\([0-9]*\).*/\1/p')
    # A module that ran no test was not selected: the run says nothing, so it counts as unfinished.
    if [ -z "$ran" ] || [ "$ran" = 0 ]; then
      unfinished="$unfinished $module(-n $n, exit $rc)"
      echo "FAIL mpi4py: $module -n $n did not finish or ran no test (exit $rc; see $log)"
      continue
    fi
    total_run=$((total_run + ran)) total_fail=$((total_fail + ${f:-0})) total_err=$((total_err + ${e:-0})) total_skip=$((total_skip + ${s:-0}))
    verdict=ok
    [ "${f:-0}" != 0 ] || [ "${e:-0}" != 0 ] || [ $rc != 0 ] && verdict=FAIL
    printf '%-4s mpi4py: %-24s -n %s: %4d run, %3d failures, %3d errors, %3d skipped\n' "$verdict" "$module" "$n" "$ran" "${f:-0}" "${e:-0}" "${s:-0}"
  done
done
echo "mpi4py $version on Ferry: $total_run run, $total_fail failures, $total_err errors, $total_skip skipped; unfinished:${unfinished:- none}"
[ "$total_fail" = 0 ] && [ "$total_err" = 0 ] && [ -z "$unfinished" ]
