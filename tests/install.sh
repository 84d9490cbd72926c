#!/usr/bin/env bash
# `make install PREFIX=...` into a temporary prefix, then Ferry used from there alone: with
# only the prefix's bin/ ahead of the system's on PATH and a temporary directory as the
# current one, mpicc builds a C program that mpiexec runs on 2 ranks (linked with the
# installed libmpi, not the repository's), pkg-config gives the installed flags under the
# names ferry-mpi, mpich and mpi, and `ferry bench --quick` builds and runs a benchmark from
# share/ferry/bench; mpifort builds a Fortran program with the installed mpi module that
# mpiexec runs on 2 ranks.
#
# usage: tests/install.sh      (after make build; needs pkg-config)

set -u
cd "$(dirname "$0")/.." || exit 2
root=$(pwd -P)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
work=$tmp/work
mkdir -p "$work"
unset MPICH_CC MPICH_CXX MPICH_FC FERRY

passed=0 failed=0
ok() { echo "ok $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
check() {
    if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}
shows() { sed 's/^/    /' "$1"; }
finish() {
    echo "install: $passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit
}

if make --no-print-directory install PREFIX="$prefix" > "$tmp/install.log" 2>&1; then
    ok "make install PREFIX=$prefix"
else
    fail "make install PREFIX=$prefix"
    tail -20 "$tmp/install.log" | shows /dev/stdin
    finish
fi
missing=
for f in bin/ferry bin/mpicc bin/mpicxx bin/mpic++ bin/mpifort bin/mpiexec bin/mpirun bin/mcapicc \
    lib/libmpi.so.12 lib/libmpi.so lib/libmpich.so.12 lib/libmcapi.so include/mpi.h include/mcapi.h \
    lib/libmpifort.so.12 lib/libmpifort.so lib/libmpichfort.so.12 include/mpif.h include/mpi.mod \
    include/ferry_mpi_functions.h include/ferry_pmpi_functions.h include/ferry_mpi_large_count.h \
    lib/pkgconfig/ferry-mpi.pc lib/pkgconfig/mpich.pc lib/pkgconfig/mpi.pc \
    share/ferry/bench/benchutil.h share/ferry/bench/latency.c; do
    [ -e "$prefix/$f" ] || missing="$missing $f"
done
check "the prefix holds every file" "" "$missing"

cd "$work" || exit 2
export PATH="$prefix/bin:/usr/local/bin:/usr/bin:/bin"

check "mpicc is the installed one" "$prefix/bin/mpicc" "$(command -v mpicc)"
check "mpicc -show uses the prefix" "cc -I$prefix/include -L$prefix/lib -Wl,-rpath,$prefix/lib -lmpi" "$(mpicc -show)"
if mpicc -O2 -Wall -o ring "$root/tests/wrappers/ring.c" > build.log 2>&1; then
    ok "mpicc builds a C program outside the repository"
    if ldd ring | grep -q "$prefix/lib/libmpi.so.12"; then
        ok "the program is linked with the installed libmpi"
    else
        fail "the program is not linked with $prefix/lib/libmpi.so.12"
        ldd ring | shows /dev/stdin
    fi
    out=$(mpiexec -n 2 --timeout 60 ./ring 2>&1)
    check "mpiexec -n 2 runs it" "ring ok 2" "$out"
else
    fail "mpicc cannot build tests/wrappers/ring.c"
    shows build.log
fi

if mpifort -o uses_mpi "$root/tests/wrappers/uses_mpi.f90" > fbuild.log 2>&1; then
    if ldd uses_mpi | grep -q "$prefix/lib/libmpifort.so.12"; then
        ok "mpifort builds a Fortran program linked with the installed libmpifort"
    else
        fail "the Fortran program is not linked with $prefix/lib/libmpifort.so.12"
        ldd uses_mpi | shows /dev/stdin
    fi
    check "mpiexec -n 2 runs the Fortran program" "fortran ok 3" "$(mpiexec -n 2 --timeout 60 ./uses_mpi 2>&1)"
else
    fail "mpifort cannot build tests/wrappers/uses_mpi.f90 outside the repository"
    shows fbuild.log
fi

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
want="-I$prefix/include -L$prefix/lib -Wl,-rpath,$prefix/lib -lmpi"
for pc in ferry-mpi mpich mpi; do
    check "pkg-config --cflags --libs $pc" "$want" "$(pkg-config --cflags --libs "$pc" | sed 's/ *$//')"
done

if ferry bench --help > bench-help.log 2>&1; then
    ok "ferry bench --help"
else
    fail "ferry bench --help"
    shows bench-help.log
fi
if ferry bench --quick --benchmarks latency > bench.log 2>&1 &&
    grep -q '^ferry,latency,' build/bench/results/results.csv 2>/dev/null; then
    ok "ferry bench --quick --benchmarks latency from a directory outside the repository"
else
    fail "ferry bench --quick --benchmarks latency outside the repository"
    shows bench.log
fi
finish
