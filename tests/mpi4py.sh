#!/usr/bin/env bash
# mpi4py's own test suite on Ferry (make test-long): fetches mpi4py's source release from PyPI,
# builds it into a virtual environment under build/mpi4py, and runs every test module of its
# suite under `ferry run -n N` (each module a job of its own, so one that aborts or hangs costs
# only its own tests). Prints one line per module and rank count, then the totals, as unittest
# counts them: tests run, failures, errors, skipped, and the modules whose job did not finish
# (crashed or timed out).
#
# Two builds (-b): `ferry` builds mpi4py with bin/mpicc (mpi4py's configuration sees which
# functions Ferry has); `mpich` builds it with Debian's mpicc.mpich and runs it on Ferry's
# library (lib/ first on LD_LIBRARY_PATH: libmpich.so.12 is Ferry's), as a user's MPICH-built
# mpi4py would run. The Ferry build runs the spawn tests (MPI4PY_TEST_SPAWN=1) and
# test_dynproc, in runs with room for the children (--universe-size 64). The MPICH build
# does not: its spawned children are Python processes that load mpi4py with every symbol
# bound at once, and it references MPI_Register_datarep, which Ferry lacks (see below), so
# mpi4py's own switch (MPI4PY_TEST_SPAWN=0) skips its spawn tests and test_dynproc is left
# out of it. The MPICH build calls whatever MPICH has, so what
# would call user data representations (MPI_Register_datarep, which Ferry does not have) is
# left out of it too: test_io's TestDatarep; the Ferry build's datarep test skips itself.
#
# -q runs a quick subset (make test): a few modules that cover point-to-point, collectives,
# communicators, datatypes and attributes.
#
# Usage: tests/mpi4py.sh [-b ferry|mpich] [-n "1 2 3 4"] [-q] [-v VERSION] [-t SECONDS] [MODULE-REGEX]
# Exit status: 0 when no test failed or errored and every job finished.
set -u
cd "$(dirname "$0")/.." || exit 2
repo=$PWD
ranks="1 2 3 4"
version=4.1.2
limit=300
build=ferry
quick=""
excludes=()
usage() { echo "usage: $0 [-b ferry|mpich] [-n \"1 2 3 4\"] [-q] [-v VERSION] [-t SECONDS] [MODULE-REGEX]" >&2; exit 2; }
while getopts "b:n:qv:t:" opt; do
  case $opt in
    b) build=$OPTARG ;;
    n) ranks=$OPTARG ;;
    q) quick=1 ;;
    v) version=$OPTARG ;;
    t) limit=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
only=${1:-}
case $build in
  ferry) cc=$repo/bin/mpicc skip_modules="" spawn=1
         # It asks the extension to reference every MPI-4.0 function: Ferry's lacks exactly
         # MPI_Register_datarep (tests/abi/symbols.sh lists it).
         excludes=(-x testSymbolCoverage) ;;
  mpich) cc=mpicc.mpich skip_modules="test_dynproc" spawn=0
         excludes=(-x TestDatarep) ;;
  *) usage ;;
esac
if [ -n "$quick" ] && [ -z "$only" ]; then
  only='^test_(p2p_buf|cco_buf|comm|group|datatype|attributes|errhandler|info|request|status|pack|op)$'
fi
work=$repo/build/mpi4py
venv=$work/venv
[ "$build" = mpich ] && venv=$work/venv-mpich
src=$work/$build/mpi4py-$version
mkdir -p "$work/$build"

if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || exit 2
  "$venv/bin/pip" install -q wheel setuptools "cython>=3.0.1" || exit 2
fi
# NumPy, for the suite's array tests (without it they skip).
"$venv/bin/python" -c 'import numpy' 2>/dev/null || "$venv/bin/pip" install -q numpy || exit 2
if [ ! -d "$src" ]; then
  [ -f "$work/mpi4py-$version.tar.gz" ] ||
    "$venv/bin/pip" download -q --no-deps --no-binary=:all: "mpi4py==$version" -d "$work" || exit 2
  tar xzf "$work/mpi4py-$version.tar.gz" -C "$work/$build" || exit 2
fi
# The Ferry build is built again whenever Ferry's header is newer than it, so that mpi4py's
# configuration (which MPI functions are declared) matches the library. Built without
# optimisation: it is a test build, and that takes a third of the time.
stamp=$work/built-$build-$version
newer=""
[ "$build" = ferry ] && for h in "$repo"/include/*.h; do [ "$h" -nt "$stamp" ] && newer=1; done
if [ ! -f "$stamp" ] || [ -n "$newer" ]; then
  echo "mpi4py: building $version with $cc (a few minutes)"
  rm -rf "$src/build"
  (cd "$src" && CFLAGS="-O0 -g0" MPICC="$cc" "$venv/bin/pip" install -q --no-build-isolation --force-reinstall --no-deps .) >"$work/build-$build.log" 2>&1 ||
    { echo "FAIL mpi4py: the build failed (see $work/build-$build.log)"; exit 1; }
  touch "$stamp"
fi
# Python loads extension modules with every symbol bound at once (RTLD_NOW). The MPICH build
# references MPICH's user data representation and dynamic-process functions, which Ferry does
# not have, so it is loaded with lazy binding, as a C program is by default; the modules and
# cases that would call those functions are left out above.
main=(main.py)
[ "$build" = mpich ] && main=(-c 'import os, runpy, sys; sys.setdlopenflags(os.RTLD_LAZY | os.RTLD_GLOBAL); sys.argv[0] = "main.py"; runpy.run_path("main.py", run_name="__main__")')
# mpi4py's own switch for the tests that spawn (at one rank, mpi4py.futures spawns its workers).
export MPI4PY_TEST_SPAWN=$spawn
# The MPICH build must load Ferry's library, not MPICH's.
export LD_LIBRARY_PATH="$repo/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

total_run=0 total_fail=0 total_err=0 total_skip=0 unfinished=""
for n in $ranks; do
  for file in "$src"/test/test_*.py; do
    module=$(basename "$file" .py)
    [ -n "$only" ] && ! [[ $module =~ $only ]] && continue
    [[ " $skip_modules " == *" $module "* ]] && continue
    log=$work/$build/$module.$n.log
    (cd "$src/test" && timeout $((limit + 30)) "$repo/target/release/ferry" run --universe-size 64 -n "$n" --timeout "$limit" \
      "$venv/bin/python" "${main[@]}" --no-builddir "${excludes[@]}" -i "^$module\.py\$") >"$log" 2>&1
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
    printf '%-4s mpi4py[%s]: %-24s -n %s: %4d run, %3d failures, %3d errors, %3d skipped\n' "$verdict" "$build" "$module" "$n" "$ran" "${f:-0}" "${e:-0}" "${s:-0}"
  done
done
echo "mpi4py $version ($build build) on Ferry: $total_run run, $total_fail failures, $total_err errors, $total_skip skipped; unfinished:${unfinished:- none}"
[ "$total_fail" = 0 ] && [ "$total_err" = 0 ] && [ -z "$unfinished" ]
