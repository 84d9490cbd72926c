#!/bin/sh
# A Fortran program built with Debian's mpif90.mpich runs on Ferry's library: MPICH's Fortran
# layer (libmpichfort.so.12) loads against Ferry's libmpi (it needs Ferry's copies of MPICH's
# data objects, crates/ferry-mpi/src/abi_objects.rs) and its calls reach Ferry with MPICH's
# handles. Ferry's own Fortran layer, lib/libmpichfort.so.12, would be found first in lib/, so
# the runs see only Ferry's libmpi under MPICH's name (a directory of its own holds that link)
# and take MPICH's Fortran layer from the system; tests/fortran.sh runs such programs on
# Ferry's Fortran layer. Skips, with a message, without mpif90.mpich.
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
mkdir "$tmp/lib"
ln -s "$root/lib/libmpi.so.12" "$tmp/lib/libmpich.so.12"
# MPICH's `mpi` module gives gfortran no generic interface for choice buffers, so it warns on
# every buffer of another type than the first: shown only if the build fails.
if ! (cd "$tmp" && "$FC" -O1 -o prog "$here/fortran_mpich.f90") 2>"$tmp/build.log"; then
    echo "FAIL abi-fortran: $FC could not build the program"
    cat "$tmp/build.log"
    exit 1
fi
fail=0
fort=$(LD_LIBRARY_PATH="$tmp/lib" ldd "$tmp/prog" | awk '$1 == "libmpichfort.so.12" { print $3 }')
mpich=$(LD_LIBRARY_PATH="$tmp/lib" ldd "$tmp/prog" | awk '$1 == "libmpich.so.12" { print $3 }')
if [ "$(readlink -f "$mpich")" != "$(readlink -f "$root/lib/libmpi.so.12")" ] || [ "$fort" = "$root/lib/libmpichfort.so.12" ]; then
    echo "FAIL abi-fortran: the program would load $fort and $mpich, not MPICH's Fortran layer on Ferry's libmpi"
    exit 1
fi
for n in 1 2 4; do
    if LD_LIBRARY_PATH="$tmp/lib" "$root/target/release/ferry" run -n $n --timeout 60 "$tmp/prog" >"$tmp/out" 2>&1 &&
        [ "$(grep -c "^fortran ok rank [0-9]* of $n\$" "$tmp/out")" = $n ]; then
        echo "ok   abi-fortran: a program built with $FC, -n $n on Ferry's library"
    else
        echo "FAIL abi-fortran: -n $n"
        sed 's/^/    | /' "$tmp/out" | tail -n 15
        fail=1
    fi
done
exit $fail
