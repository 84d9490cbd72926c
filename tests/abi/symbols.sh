#!/bin/sh
# Compares the MPI symbols Ferry's lib/libmpi.so.12 defines with those of MPICH's
# libmpich.so.12 and prints what MPICH has and Ferry has not, by family. Fails when Ferry
# defines an MPI_ name MPICH does not (a misspelt or invented export) or an MPI_ function
# without its PMPI_ twin. A name MPICH declares in its header but defines only in its
# Fortran library, or not at all (MPI_Status_c2f08 and the other F08 status conversions,
# which MPI puts in the C interface), is not an invented one. Fails too when Ferry lacks a
# symbol of MPICH's outside the part of MPI it leaves out, MPI-IO's
# user data representations (MPI_Register_datarep)
# (and mpi4py's symbol coverage test, which tests/mpi4py.sh leaves out, rests on this). Run
# after `make build`.
# MPICH_LIB and MPICH_PROTO (MPICH's mpi_proto.h) override the files compared with;
# without the library the comparison is skipped, with a message.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ferry="$root/lib/libmpi.so.12"
mpich=${MPICH_LIB:-/usr/lib/x86_64-linux-gnu/libmpich.so.12}
proto=${MPICH_PROTO:-/usr/include/x86_64-linux-gnu/mpich/mpi_proto.h}

[ -e "$ferry" ] || { echo "symbols: $ferry not built (make build)" >&2; exit 1; }
[ -e "$mpich" ] || { echo "symbols: SKIPPED: $mpich not found (install libmpich12)"; exit 0; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Defined dynamic symbols named MPI_* (functions and data objects), one per line.
defined() { nm -D --defined-only "$1" | awk '{ print $3 }' | grep -E '^MPI_' | sort -u; }
defined "$ferry" > "$tmp/ferry"
defined "$mpich" > "$tmp/mpich"

# The MPI_ functions MPICH's header declares.
if [ -e "$proto" ]; then
    grep -oE '^int MPI_[A-Za-z0-9_]+\(' "$proto" | sed 's/^int //; s/($//' | sort -u > "$tmp/declared"
else
    : > "$tmp/declared"
fi
extra=$(comm -13 "$tmp/mpich" "$tmp/ferry" | comm -23 - "$tmp/declared")
if [ -n "$extra" ]; then
    echo "symbols: FAILED: Ferry defines MPI_ names MPICH does not:" $extra >&2
    exit 1
fi
nopmpi=$(nm -D --defined-only "$ferry" | awk '$2 == "T" { print $3 }' | grep -E '^MPI_' \
         | while read -r f; do nm -D --defined-only "$ferry" | grep -q " P$f\$" || echo "$f"; done)
if [ -n "$nopmpi" ]; then
    echo "symbols: FAILED: MPI_ functions without their PMPI_ twin:" $nopmpi >&2
    exit 1
fi

echo "symbols: MPICH defines $(wc -l < "$tmp/mpich") MPI_ symbols, Ferry $(wc -l < "$tmp/ferry")" \
     "(each MPI_ function also as PMPI_)"
echo "symbols: missing from Ferry, by family:"
comm -23 "$tmp/mpich" "$tmp/ferry" | sed 's/^MPI_//' | awk '
    /^(Win_|Put|Rput|Get_c$|Get$|Rget|Get_accumulate|Rget_accumulate|Accumulate|Raccumulate|Compare_and_swap|Fetch_and_op)/ { f = "one-sided" }
    /^(File_|Register_datarep)/ { f = "I/O" }
    /^(Comm_spawn|Comm_accept|Comm_connect|Comm_join|Comm_get_parent|Comm_disconnect|Open_port|Close_port|Publish_name|Unpublish_name|Lookup_name)/ { f = "dynamic processes" }
    /^T_/ { f = "tools (MPI_T)" }
    /^(Session_|Group_from_session_pset|Intercomm_create_from_groups|Comm_create_from_group)/ { f = "sessions" }
    /^(Intercomm_create$|Intercomm_merge|Comm_remote_)/ { f = "intercommunicators" }
    /^(Psend_init|Precv_init|Pready|Parrived)/ { f = "partitioned" }
    /^F08_/ { f = "Fortran 2008 objects" }
    f == "" { f = "other" }
    { n[f]++; s[f] = s[f] " " $0; f = "" }
    END { for (k in n) printf "  %3d %s:%s\n", n[k], k, s[k] }' | sort -k2

left=$(comm -23 "$tmp/mpich" "$tmp/ferry" | sed 's/^MPI_//' \
       | grep -vE '^(Register_datarep)' || true)
if [ -n "$left" ]; then
    echo "symbols: FAILED: Ferry lacks MPICH symbols outside user data representations:" $left >&2
    exit 1
fi

# A tool MPICH builds against its own library: mpivars lists the control variables through
# MPI_T. It must load on Ferry's library with every symbol bound at once and list Ferry's.
mpivars=${MPIVARS:-/usr/bin/mpivars}
if [ -x "$mpivars" ] && [ -x "$root/target/release/ferry" ]; then
    out=$(LD_BIND_NOW=1 LD_LIBRARY_PATH="$root/lib" FERRY_EAGER_LIMIT=12345 \
          timeout 60 "$root/target/release/ferry" run -n 1 "$mpivars" 2>&1) || {
        echo "symbols: FAILED: MPICH's mpivars does not run on Ferry's library:" >&2
        echo "$out" | tail -5 >&2
        exit 1
    }
    echo "$out" | grep -q 'FERRY_EAGER_LIMIT *=12345' || {
        echo "symbols: FAILED: mpivars did not list FERRY_EAGER_LIMIT=12345:" >&2
        echo "$out" | head -5 >&2
        exit 1
    }
    echo "symbols: MPICH's mpivars runs on Ferry's library (LD_BIND_NOW=1) and lists $(echo "$out" | grep -o '^	FERRY_[A-Z0-9_]*' | sort -u | wc -l) knobs"
fi
