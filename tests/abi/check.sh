#!/bin/sh
# ABI check of include/mpi.h: it must compile cleanly as C and C++, declare exactly the functions
# of abi_signatures.c, and agree with MPICH's header on every constant, type and layout
# (abi_print.c compiled against both) and every function signature (abi_signatures.c compiled
# against both). Exits non-zero, showing the difference, on any mismatch.
#
# Environment: CC, CXX (default cc, c++); MPICC_MPICH (default mpicc.mpich). Without MPICH's
# compiler wrapper the comparison with MPICH is skipped, with a message, unless
# FERRY_ABI_REQUIRE_MPICH=1.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
CC=${CC:-cc}
CXX=${CXX:-c++}
MPICC=${MPICC_MPICH:-mpicc.mpich}

# Values that differ from MPICH on purpose (none now: Ferry says MPI 4.0, as MPICH 4.0 does).
INTENTIONAL=""

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

say() { printf 'abi: %s\n' "$*"; }
die() { printf 'abi: FAILED: %s\n' "$*" >&2; exit 1; }

# Drops the lines of intentional differences from a facts file.
filter() {
    awk -v skip="$INTENTIONAL" 'BEGIN { n = split(skip, s, " "); for (i = 1; i <= n; i++) k[s[i]] = 1 }
                                !($1 in k)' "$1"
}

# 1. The header alone compiles without a warning in every language mode.
printf '#include <mpi.h>\nint main(void) { MPI_Status s; (void)s; return MPI_SUCCESS; }\n' \
    > "$tmp/include.c"
for std in c89 c99 c11 c17; do
    "$CC" -std=$std -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$root/include" \
        "$tmp/include.c" || die "mpi.h does not compile cleanly as $std"
done
for std in c++98 c++11 c++17; do
    "$CXX" -x c++ -std=$std -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$root/include" \
        "$tmp/include.c" || die "mpi.h does not compile cleanly as $std"
done
say "mpi.h compiles cleanly as C89/C99/C11/C17 and C++98/11/17"

# 2. The header declares exactly the functions abi_signatures.c lists, MPI_ and PMPI_ names.
"$CC" -E -P -x c "$root/include/mpi.h" | tr '\n' ' ' \
    | grep -oE '\bP?MPI_[A-Za-z0-9_]+ *\(' | tr -d ' (' | sort > "$tmp/declared.txt"
sed -n 's/^SIG([A-Za-z_]*, \(MPI_[A-Za-z0-9_]*\),.*/\1/p' "$here/abi_signatures.c" \
    | sed 'p; s/^/P/' | sort > "$tmp/listed.txt"
diff -u "$tmp/listed.txt" "$tmp/declared.txt" \
    || die "functions declared by mpi.h (+) differ from those abi_signatures.c lists (-)"
say "mpi.h declares the $(grep -c '^MPI_' "$tmp/listed.txt") functions listed, each with its PMPI_ twin"

# 3. Facts and signatures against Ferry's header.
"$CC" -std=c11 -Wall -Wextra -pedantic -Werror -I"$root/include" -I"$here" \
    "$here/abi_print.c" -o "$tmp/print_ferry" || die "abi_print.c does not build against mpi.h"
"$tmp/print_ferry" > "$tmp/ferry.txt"
"$CC" -std=c99 -Wall -Wextra -pedantic -Werror -Werror=incompatible-pointer-types \
    -I"$root/include" -c "$here/abi_signatures.c" -o "$tmp/sig_ferry.o" \
    || die "a prototype of mpi.h differs from abi_signatures.c (C)"
"$CXX" -x c++ -Wall -Wextra -Werror -I"$root/include" -c "$here/abi_signatures.c" \
    -o "$tmp/sig_ferry_cxx.o" || die "a prototype of mpi.h differs from abi_signatures.c (C++)"

# 4. The same against MPICH's header.
if ! command -v "$MPICC" > /dev/null 2>&1; then
    if [ "${FERRY_ABI_REQUIRE_MPICH:-0}" = 1 ]; then
        die "$MPICC not found"
    fi
    say "SKIPPED the comparison with MPICH: $MPICC not found (install libmpich-dev)"
    exit 0
fi
"$MPICC" -std=c11 -I"$here" "$here/abi_print.c" -o "$tmp/print_mpich" \
    || die "abi_print.c does not build against MPICH's mpi.h"
"$tmp/print_mpich" > "$tmp/mpich.txt"
filter "$tmp/ferry.txt" > "$tmp/ferry.cmp"
filter "$tmp/mpich.txt" > "$tmp/mpich.cmp"
diff -u "$tmp/mpich.cmp" "$tmp/ferry.cmp" || die "mpi.h (+) differs from MPICH's header (-)"
say "$(wc -l < "$tmp/ferry.cmp") constants, sizes and offsets equal MPICH's"
for name in $INTENTIONAL; do
    say "  differs on purpose: $(grep "^$name " "$tmp/ferry.txt") (MPICH: $(grep "^$name " "$tmp/mpich.txt" | cut -d' ' -f2))"
done

"$MPICC" -std=c99 -Werror=incompatible-pointer-types -c "$here/abi_signatures.c" \
    -o "$tmp/sig_mpich.o" || die "a prototype of MPICH's header differs from abi_signatures.c (C)"
mpich_includes=$("$MPICC" -show | tr ' ' '\n' | grep '^-I' | tr '\n' ' ')
# shellcheck disable=SC2086 # the include flags are meant to split
"$CXX" -x c++ -DMPICH_SKIP_MPICXX $mpich_includes -c "$here/abi_signatures.c" \
    -o "$tmp/sig_mpich_cxx.o" || die "a prototype of MPICH's header differs (C++)"
say "every prototype has MPICH's signature (C and C++)"
