#!/usr/bin/env bash
# Ferry's Fortran face (crates/ferry-fortran, include/mpif.h, the mpi module):
#   - include/mpif.h has every integer constant of include/mpi.h, with its value (Fortran's
#     string lengths one less, the predefined attribute keyvals one more, as MPICH's), and
#     agrees with MPICH's mpif.h on the names both have;
#   - the mpi module's interfaces refuse a call without IERROR;
#   - lib/libmpifort.so.12 exports, under all eight of MPICH's spellings, the Fortran symbol
#     of every function of the C library that Debian's libmpichfort.so.12 binds;
#   - the programs of tests/fortran (fixed form with mpif.h, free form with `use mpi`), built
#     by bin/mpifort, pass under `ferry run` with the rank counts of their `! ranks:` line;
#   - the same programs built by Debian's mpif90.mpich (MPICH's mpif.h, mpi module and
#     libmpichfort) run unchanged on Ferry's libmpifort and libmpi (lib/ first on
#     LD_LIBRARY_PATH, every symbol bound at load: LD_BIND_NOW=1).
# With --mpi mpich, the programs are built by mpif90.mpich and run by mpiexec.mpich instead, to
# check the programs themselves. The MPICH parts skip, with a message, without mpif90.mpich.
#
# usage: tests/fortran.sh [--mpi ferry|mpich]      (after make build; needs gfortran)

set -u
cd "$(dirname "$0")/.." || exit 2
root=$(pwd -P)
FERRY=${FERRY:-$root/target/release/ferry}
MPIF90=${MPIF90_MPICH:-mpif90.mpich}
MPICH_MPIF=/usr/include/x86_64-linux-gnu/mpich/mpif.h
MPICH_FORT=/usr/lib/x86_64-linux-gnu/libmpichfort.so.12
mode=ferry
[ "${1:-}" = --mpi ] && mode=${2:-ferry}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset MPICH_FC MPICH_CC

passed=0 failed=0
ok() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
skip() { echo "skip $*"; }
shows() { sed 's/^/    | /' "$1" | tail -n 15; }
have_mpich=1
command -v "$MPIF90" >/dev/null 2>&1 || have_mpich=0

# ---- constants ---------------------------------------------------------------------------

# NAME VALUE for each PARAMETER of a Fortran include file (values as written).
parameters() {
    tr -d ' ' < "$1" | sed -n 's/^PARAMETER(\(MPI_[A-Z0-9_]*\)=\(.*\))$/\1 \2/p'
}

if [ "$mode" = ferry ]; then
    parameters include/mpif.h > "$tmp/ours"
    # Every integer macro of mpi.h (pointers and functions left out), with its C value.
    {
        echo '#include <stdio.h>'
        echo '#include <mpi.h>'
        echo '#define INTEGER(x) _Generic((x), int: 1, long: 1, unsigned: 1, default: 0)'
        echo 'int main(void) {'
        sed -n 's/^#define \(MPI_[A-Z0-9_]*\)[ (].*/\1/p' include/mpi.h | sort -u | while read -r name; do
            printf '    if (INTEGER(%s)) printf("%s %%ld\\n", (long)(%s));\n' "$name" "$name" "$name"
        done
        echo '    return 0;'
        echo '}'
    } > "$tmp/cvalues.c"
    if bin/mpicc -o "$tmp/cvalues" "$tmp/cvalues.c" > "$tmp/cvalues.log" 2>&1 && "$tmp/cvalues" > "$tmp/c"; then
        bad= missing=
        while read -r name c; do
            # Fortran's value: string lengths without C's NUL, and MPICH's Fortran keyvals of
            # the predefined attributes (builtin keyval handles: C's + 1).
            case $name in
                MPI_MAX_*_NAME | MPI_MAX_*_STRING | MPI_MAX_INFO_* | MPI_MAX_*_LEN) want=$((c - 1)) ;;
                *) if [ $(((c >> 26) & 15)) = 9 ] && [ $(((c >> 30) & 3)) = 1 ]; then want=$((c + 1)); else want=$c; fi ;;
            esac
            f=$(awk -v n="$name" '$1 == n { print $2 }' "$tmp/ours")
            if [ -z "$f" ]; then
                missing="$missing       INTEGER $name\n       PARAMETER ($name=$want)\n"
            elif [ "$f" != "$want" ]; then
                bad="$bad $name=$f(want $want)"
            fi
        done < "$tmp/c"
        if [ -z "$bad$missing" ]; then
            ok "mpif.h has all $(wc -l < "$tmp/c") integer constants of mpi.h, with their Fortran values"
        else
            fail "mpif.h against mpi.h:${bad:- values agree}${missing:+; it lacks these (lines to add):}"
            [ -z "$missing" ] || printf "$missing"
        fi
    else
        fail "mpif.h against mpi.h: the C program did not build or run"
        shows "$tmp/cvalues.log"
    fi
    if [ -f "$MPICH_MPIF" ]; then
        parameters "$MPICH_MPIF" > "$tmp/mpich"
        bad= n=0
        while read -r name f; do
            m=$(awk -v n="$name" '$1 == n { print $2 }' "$tmp/mpich")
            [ -n "$m" ] || continue
            # MPICH writes some as expressions (512-1, (-32766)).
            case $m in *[!-0-9+\(\)]*) continue ;; esac
            n=$((n + 1))
            [ "$f" = "$((m))" ] || bad="$bad $name=$f(MPICH:$m)"
        done < "$tmp/ours"
        if [ -z "$bad" ]; then ok "mpif.h: $n constants agree with MPICH's mpif.h"; else fail "mpif.h differs from MPICH's:$bad"; fi
    else
        skip "mpif.h against MPICH's: no $MPICH_MPIF"
    fi
    if [ "$(awk '!/^!/ && length > 72' include/mpif.h | wc -l)" = 0 ]; then
        ok "mpif.h fits fixed form (no statement past column 72)"
    else
        fail "mpif.h has statements past column 72"
    fi
fi

# ---- the mpi module's interfaces ---------------------------------------------------------

if [ "$mode" = ferry ]; then
    cat > "$tmp/no_ierror.f90" <<'EOF'
program no_ierror
  use mpi
  integer :: rank, ierr
  logical :: flag
  call MPI_Init(ierr)
  call MPI_Initialized(flag, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
end program
EOF
    if (cd "$tmp" && "$root/bin/mpifort" -c no_ierror.f90) > "$tmp/iface.log" 2>&1; then
        fail "the mpi module let a call without IERROR through"
    elif grep -q "Missing actual argument for argument .ierror." "$tmp/iface.log" &&
        [ "$(grep -c "Error:" "$tmp/iface.log")" = 1 ]; then
        ok "the mpi module's interfaces refuse a call without IERROR (and take a LOGICAL flag)"
    else
        fail "the mpi module refused the program for another reason"
        shows "$tmp/iface.log"
    fi
fi

# ---- symbols -----------------------------------------------------------------------------

if [ "$mode" = ferry ] && [ -f "$MPICH_FORT" ]; then
    nm -D --defined-only lib/libmpifort.so.12 | awk '{ print $3 }' | sort > "$tmp/our_syms"
    nm -D --defined-only "$MPICH_FORT" | awk '{ print $3 }' | sort > "$tmp/mpich_syms"
    # The C library's functions, lower-cased, that MPICH binds for Fortran (mpi_x_).
    sed -n 's/^[a-zA-Z_ ]*[ *]\(MPI_[A-Za-z0-9_]*\)(.*/\1/p' include/ferry_mpi_functions.h |
        tr 'A-Z' 'a-z' | sort -u > "$tmp/c_funcs"
    # The functions the generator left without a binding, as its output lists them.
    sed -n 's/^ \*   \(MPI_[A-Za-z0-9_]*\): \(.*\)/\1 \2/p' build/fortran/bindings.c > "$tmp/unbound"
    while read -r f why; do skip "no Fortran binding for $f: $why"; done < "$tmp/unbound"
    missing= count=0
    while read -r f; do
        grep -qx "${f}_" "$tmp/mpich_syms" || continue
        awk '{ print tolower($1) }' "$tmp/unbound" | grep -qx "$f" && continue
        count=$((count + 1))
        up=$(echo "$f" | tr 'a-z' 'A-Z')
        for s in "${f}_" "${f}__" "$f" "$up" "p${f}_" "p${f}__" "p$f" "P$up"; do
            grep -qx "$s" "$tmp/our_syms" || missing="$missing $s"
        done
    done < "$tmp/c_funcs"
    if [ -z "$missing" ] && [ "$count" -gt 200 ]; then
        ok "libmpifort exports all 8 spellings of the $count Fortran functions MPICH binds over Ferry's C functions"
    else
        fail "libmpifort ($count functions checked) lacks:$(echo "$missing" | cut -c1-400)"
    fi
    # And nothing that MPICH's Fortran layer does not export too (the common blocks included).
    extra=$(grep -vxFf "$tmp/mpich_syms" "$tmp/our_syms" | tr '\n' ' ')
    if [ -z "$extra" ]; then ok "libmpifort exports no name MPICH's Fortran layer lacks"; else fail "names MPICH lacks: $extra"; fi
elif [ "$mode" = ferry ]; then
    skip "libmpifort's symbols against MPICH's: no $MPICH_FORT"
fi

# ---- programs ----------------------------------------------------------------------------

# run NAME PROGRAM N [ENV...]: runs it on N ranks; every rank must print "NAME ok rank R of N".
run() {
    local name=$1 prog=$2 n=$3 label=$4
    shift 4
    local start=$SECONDS
    if [ "$mode" = mpich ]; then
        timeout 60 mpiexec.mpich -n "$n" "$prog" > "$tmp/out" 2>&1
    else
        env "$@" "$FERRY" run -n "$n" --timeout 60 "$prog" > "$tmp/out" 2>&1
    fi
    local rc=$?
    if [ "$rc" = 0 ] && [ "$(grep -c "^$name ok rank [0-9]* of $n\$" "$tmp/out")" = "$n" ]; then
        ok "$label -n $n ($((SECONDS - start)) s)"
    else
        fail "$label -n $n: exit $rc"
        shows "$tmp/out"
    fi
}

# build WRAPPER SOURCE OUT: with -O2, as MPICH's wrapper builds; quiet unless it fails
# (gfortran warns about argument mismatches).
build() {
    # In $tmp, where gfortran leaves the .mod files of the programs' own modules.
    if (cd "$tmp" && "$1" -O2 -o "$3" "$root/$2") > "$tmp/build.log" 2>&1; then
        return 0
    fi
    fail "$1 cannot build $2"
    shows "$tmp/build.log"
    return 1
}

if [ "$mode" = mpich ] && [ "$have_mpich" = 0 ]; then
    skip "programs under MPICH: no $MPIF90"
fi
for src in tests/fortran/*.f tests/fortran/*.f90; do
    name=$(basename "${src%.*}")
    ranks=$(sed -n 's/^! ranks: *//p' "$src" | head -1)
    if [ "$mode" = ferry ]; then
        build "$root/bin/mpifort" "$src" "$tmp/$name" || continue
        for n in $ranks; do run "$name" "$tmp/$name" "$n" "$name"; done
    fi
    # Built by MPICH's wrapper; hello.f calls MPI_AINT_ADD, which MPICH's mpif.h leaves
    # undeclared (an implicit REAL).
    [ "$have_mpich" = 1 ] && [ "$name" != hello ] || continue
    build "$MPIF90" "$src" "$tmp/mpich_$name" || continue
    if [ "$mode" = mpich ]; then
        for n in $ranks; do run "$name" "$tmp/mpich_$name" "$n" "mpich:$name"; done
    else
        n=${ranks##* }
        run "$name" "$tmp/mpich_$name" "$n" "abi:$name (built by $MPIF90)" \
            LD_LIBRARY_PATH="$root/lib" LD_BIND_NOW=1
    fi
done
if [ "$mode" = ferry ] && [ "$have_mpich" = 1 ]; then
    lib=$(LD_LIBRARY_PATH="$root/lib" ldd "$tmp/mpich_p2p" 2>/dev/null | awk '$1 == "libmpichfort.so.12" { print $3 }')
    if [ "$lib" = "$root/lib/libmpichfort.so.12" ]; then
        ok "an MPICH-built program loads Ferry's libmpichfort.so.12"
    else
        fail "an MPICH-built program loads libmpichfort.so.12 from '$lib'"
    fi
elif [ "$have_mpich" = 0 ]; then
    skip "programs built by MPICH's wrapper: no $MPIF90"
fi

echo "fortran: $passed passed, $failed failed"
[ "$failed" = 0 ]
