#!/bin/sh
# A Fortran program built with Debian's mpif90.mpich runs on Ferry's library: MPICH's Fortran
# layer (libmpichfort.so.12) loads against Ferry's libmpi (it needs Ferry's copies of MPICH's
# data objects, crates/ferry-mpi/src/abi_objects.rs) and its calls reach Ferry with MPICH's
# handles. Ferry has no Fortran bindings of its own yet; this checks MPICH-built binaries.
# Skips, with a message, without mpif90.mpich.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FC=${MPIF90_MPICH:-mpif90.mpich}
if ! command -v "$FC" >/dev/null 2>&1; then
    echo "skip abi-fortran: no $FC (Debian's libmpich-dev and gfortran)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# MPICH's `mpi` module gives gfortran no generic interface for choice buffers, so it warns on
# every buffer of another type than the first: shown only if the build fails.
if ! (cd "$tmp" && "$FC" -O1 -o prog "$here/fortran_mpich.f90") 2>"$tmp/build.log"; then
    echo "FAIL abi-fortran: $FC could not build the program"
    cat "$tmp/build.log"
    exit 1
fi
fail=0
for n in 1 2 4; do
    if LD_LIBRARY_PATH="$root/lib" "$root/target/release/ferry" run -n $n --timeout 60 "$tmp/prog" >"$tmp/out" 2>&1 &&
        [ "$(grep -c "^fortran ok rank [0-9]* of $n\$" "$tmp/out")" = $n ]; then
        echo "ok   abi-fortran: a program built with $FC, -n $n on Ferry's library"
    else
        echo "FAIL abi-fortran: -n $n"
        sed 's/^/    | /' "$tmp/out" | tail -n 15
        fail=1
    fi
done
exit $fail
