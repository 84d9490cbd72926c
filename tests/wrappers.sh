#!/usr/bin/env bash
# The compiler wrappers of bin/ as builds use them: `CC=mpicc` must not make mpicc call
# itself, MPICH_CC chooses the compiler and CC does not, -show/-compile_info/-link_info print
# MPICH's one-line commands, mpicxx builds a C++ program, mpifort links a Fortran kernel into
# a C MPI program, builds a Fortran MPI program and refuses 8-byte INTEGERs, and an
# autotools project configured with CC=mpicc builds a program that runs under `ferry run -n 2`.
#
# usage: tests/wrappers.sh      (after make build; needs g++, gfortran, autoconf, automake)

set -u
cd "$(dirname "$0")/.." || exit 2
root=$(pwd -P)
FERRY=${FERRY:-$root/target/release/ferry}
src=$root/tests/wrappers
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset MPICH_CC MPICH_CXX MPICH_FC

passed=0 failed=0
ok() { echo "ok $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }
# check NAME EXPECTED ACTUAL
check() {
    if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}
# shows LOG: the log, indented, after a failure.
shows() { sed 's/^/    /' "$1"; }

# ---- no recursion ----------------------------------------------------------------------

if CC=bin/mpicc timeout 10 bin/mpicc --version > "$tmp/version.log" 2>&1; then
    ok "CC=bin/mpicc bin/mpicc --version returns ($(head -1 "$tmp/version.log"))"
else
    fail "CC=bin/mpicc bin/mpicc --version: exit $? (124: it did not return in 10 s)"
    shows "$tmp/version.log"
fi
for name in mpicc mpicxx mcapicc; do
    MPICH_CC=$root/bin/$name MPICH_CXX=bin/mpicc timeout 10 "bin/$name" --version > "$tmp/self.log" 2>&1
    rc=$?
    if [ "$rc" = 1 ] && grep -q "is this wrapper itself" "$tmp/self.log"; then
        ok "$name refuses a compiler that is the wrapper itself"
    else
        fail "$name with itself as the compiler: exit $rc (124: it did not return), expected 1 and a message"
        shows "$tmp/self.log"
    fi
done

# ---- -show, -compile_info, -link_info --------------------------------------------------

inc="-I$root/include"
libs="-L$root/lib -Wl,-rpath,$root/lib -lmpi"
check "mpicc -show" "cc $inc $libs" "$(bin/mpicc -show)"
check "mpicc -show -O2 -o x x.c" "cc -O2 -o x x.c $inc $libs" "$(bin/mpicc -show -O2 -o x x.c)"
check "mpicc -show -c x.c" "cc -c x.c $inc" "$(bin/mpicc -show -c x.c)"
check "mpicc -compile_info" "cc $inc" "$(bin/mpicc -compile_info)"
check "mpicc -compile_info -o x x.c" "cc -o x x.c $inc" "$(bin/mpicc -compile_info -o x x.c)"
check "mpicc -link_info" "cc $inc $libs" "$(bin/mpicc -link_info)"
check "mpicxx -show" "c++ $inc $libs" "$(bin/mpicxx -show)"
check "mpic++ -show" "c++ $inc $libs" "$(bin/mpic++ -show)"
fortran_flags=
[ "$(gfortran -dumpversion 2>/dev/null | cut -d. -f1)" -ge 10 ] 2>/dev/null && fortran_flags="-fallow-argument-mismatch "
check "mpifort -show" "gfortran $fortran_flags$inc -L$root/lib -Wl,-rpath,$root/lib -lmpifort -lmpi" "$(bin/mpifort -show)"
check "mcapicc -show" "cc $inc -L$root/lib -Wl,-rpath,$root/lib -lmcapi -lpthread" "$(bin/mcapicc -show)"
check "mpicc -show from elsewhere" "cc -c x.c $inc" "$(cd "$tmp" && "$root/bin/mpicc" -show -c x.c)"

# ---- MPICH_CC is read, CC is not --------------------------------------------------------

# A fake compiler that records its arguments.
cat > "$tmp/fakecc" <<EOF
#!/bin/sh
echo "\$*" > "$tmp/fakecc.args"
EOF
chmod +x "$tmp/fakecc"
rm -f "$tmp/fakecc.args"
MPICH_CC="$tmp/fakecc" bin/mpicc -c x.c
check "MPICH_CC is the compiler" "-c x.c $inc" "$(cat "$tmp/fakecc.args" 2>/dev/null)"
rm -f "$tmp/fakecc.args"
MPICH_CXX="$tmp/fakecc -std=c++17" bin/mpicxx -c x.cc
check "MPICH_CXX with a flag is the compiler" "-std=c++17 -c x.cc $inc" "$(cat "$tmp/fakecc.args" 2>/dev/null)"
rm -f "$tmp/fakecc.args"
CC="$tmp/fakecc" CXX="$tmp/fakecc" bin/mpicc -E -x c /dev/null > /dev/null
if [ -e "$tmp/fakecc.args" ]; then fail "CC is ignored: mpicc ran \$CC"; else ok "CC is ignored"; fi
check "mpicc -cc=" "$tmp/fakecc -c x.c $inc" "$(bin/mpicc -cc="$tmp/fakecc" -show -c x.c)"

# ---- C++ -------------------------------------------------------------------------------

if bin/mpicxx -Wall -o "$tmp/hello_cxx" "$src/hello.cc" > "$tmp/cxx.log" 2>&1; then
    ok "mpicxx builds a C++ MPI program"
    if "$FERRY" run -n 2 --timeout 60 "$tmp/hello_cxx" > "$tmp/cxx.out" 2>&1 &&
        [ "$(sort "$tmp/cxx.out")" = "$(printf 'c++ rank 0 of 2\nc++ rank 1 of 2')" ]; then
        ok "the C++ program runs under ferry run -n 2"
    else
        fail "the C++ program under ferry run -n 2"
        shows "$tmp/cxx.out"
    fi
else
    fail "mpicxx cannot build tests/wrappers/hello.cc"
    shows "$tmp/cxx.log"
fi

# ---- Fortran: a kernel linked into a C MPI program; Fortran MPI ---------------------------

if bin/mpicc -c -o "$tmp/mixed.o" "$src/mixed.c" > "$tmp/f.log" 2>&1 &&
    bin/mpifort -c -o "$tmp/kernel.o" "$src/kernel.f90" >> "$tmp/f.log" 2>&1 &&
    bin/mpifort -o "$tmp/mixed" "$tmp/mixed.o" "$tmp/kernel.o" >> "$tmp/f.log" 2>&1; then
    out=$("$FERRY" run -n 2 --timeout 60 "$tmp/mixed" 2>&1)
    check "mpifort links a Fortran kernel into a C MPI program" "mixed ok 2" "$out"
else
    fail "mpicc/mpifort cannot build tests/wrappers/mixed.c with kernel.f90"
    shows "$tmp/f.log"
fi
if bin/mpifort -o "$tmp/uses_mpi" "$src/uses_mpi.f90" > "$tmp/fmpi.log" 2>&1; then
    out=$("$FERRY" run -n 2 --timeout 60 "$tmp/uses_mpi" 2>&1)
    check "mpifort builds a program that uses the mpi module, and it runs" "fortran ok 3" "$out"
else
    fail "mpifort cannot build tests/wrappers/uses_mpi.f90"
    shows "$tmp/fmpi.log"
fi

if bin/mpifort -fdefault-integer-8 -c -o "$tmp/i8.o" "$src/uses_mpi.f90" > "$tmp/i8.log" 2>&1; then
    fail "mpifort took -fdefault-integer-8"
elif grep -q "4-byte INTEGERs" "$tmp/i8.log"; then
    ok "mpifort refuses -fdefault-integer-8 (the bindings take 4-byte INTEGERs)"
else
    fail "mpifort -fdefault-integer-8 failed without saying why"
    shows "$tmp/i8.log"
fi

# ---- an autotools project configured with CC=mpicc --------------------------------------

proj=$tmp/autotools
mkdir -p "$proj"
cp "$src/configure.ac" "$src/Makefile.am" "$src/ring.c" "$proj/"
if ! (cd "$proj" && autoreconf -i) > "$tmp/autoreconf.log" 2>&1; then
    fail "autoreconf -i on tests/wrappers"
    shows "$tmp/autoreconf.log"
elif ! (cd "$proj" && timeout 120 ./configure CC="$root/bin/mpicc") > "$tmp/configure.log" 2>&1; then
    fail "./configure CC=$root/bin/mpicc"
    tail -20 "$tmp/configure.log" | shows /dev/stdin
    tail -30 "$proj/config.log" | shows /dev/stdin
elif ! (cd "$proj" && timeout 120 make) > "$tmp/make.log" 2>&1; then
    fail "make in the configured project"
    shows "$tmp/make.log"
else
    ok "autotools project: autoreconf, ./configure CC=mpicc and make"
    if ldd "$proj/ring" | grep -q "$root/lib/libmpi.so.12"; then
        ok "its program is linked with Ferry's libmpi"
    else
        fail "its program is not linked with $root/lib/libmpi.so.12"
        ldd "$proj/ring" | shows /dev/stdin
    fi
    out=$("$FERRY" run -n 2 --timeout 60 "$proj/ring" 2>&1)
    check "its program runs under ferry run -n 2" "ring ok 2" "$out"
fi

echo "wrappers: $passed passed, $failed failed"
[ "$failed" = 0 ]
