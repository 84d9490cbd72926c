#!/usr/bin/env bash
# Instructions per call of small one-sided operations, counted with callgrind rather than
# timed: builds bench/rmacount.c with each MPI implementation's own compiler, runs it on 2
# ranks with one rank under `valgrind --tool=callgrind` and the other free, then the other
# way round, and reads from each profile the inclusive instruction count of every call that
# main() made to MPI_Fetch_and_op, MPI_Compare_and_swap, MPI_Put, MPI_Get, MPI_Accumulate
# (one int64 each, on the other rank's part of an MPI_Win_allocate window, inside
# MPI_Win_lock_all) and MPI_Win_flush (after each of them), CALLS of each operation.
#
# Counting and implementations as bench/rmacount.sh (bench/callgrind-common.sh); Open MPI
# runs with its osc/rdma component left out (OMPI_MCA_osc=^rdma), as on a single host its
# shared-memory component serves windows (Debian's 4.1.4 crashes in the first
# MPI_Fetch_and_op with osc/rdma over UCX here). A row of the table is the mean of the two
# ranks' figures (both are origins of the same calls). Take figures from an idle machine.
#
# Output in DIR (default build/rmacount): as bench/collcount.sh's.

set -u

usage() {
    cg_usage "calls of each operation"
}

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
tool=rmacount
# shellcheck source=bench/callgrind-common.sh
. bench/callgrind-common.sh

cg_options "$@"

cg_choose "$impls"
run_timeout=${RMACOUNT_TIMEOUT:-600}
cg_setup
export OMPI_MCA_osc=^rdma
cg_build bench/rmacount.c
cg_run 'Fetch_and_op|Compare_and_swap|Put|Get|Accumulate|Win_flush' "$calls"

# ---- the table --------------------------------------------------------------------

summary=$out/summary.txt
{
    echo "# bench/rmacount.sh: instructions per call (callgrind Ir, inclusive), 2 ranks on $(hostname),"
    echo "# the mean of the two ranks, each the minimum over $runs run(s); $calls calls of each operation"
    cg_header
    echo
    cg_mean_table "Fetch_and_op Compare_and_swap Put Get Accumulate Win_flush" \
        "MPI_Fetch_and_op (int64, sum)|MPI_Compare_and_swap (int64)|MPI_Put (int64)|MPI_Get (int64)|MPI_Accumulate (int64, sum)|MPI_Win_flush (after each)" \
        "instructions per call" "$calls $calls $calls $calls $calls $((5 * calls))"
    echo
    echo "# each rank: its inclusive count over its calls, the minimum over the runs; a row: the mean of"
    echo "# the two ranks. Ferry / best: Ferry's figure over the lowest of the others' (below 1: Ferry runs fewer)."
} > "$summary"

echo
cat "$summary"
echo
echo "profiles in $out/raw (callgrind_annotate FILE), table in $summary"
[ $failures -eq 0 ]
