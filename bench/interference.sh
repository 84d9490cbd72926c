#!/usr/bin/env bash
# The interference experiment of status-based collectives (SEEDS.md S1) on Ferry: builds
# bench/interference.c with bin/mpicc and runs it on 8 ranks (rank 2 sends a long message
# to rank 1 as root 0 starts a bcast, scatter or gather), once with the fixed-order
# algorithms and once with the status-based ones, alternating run by run:
#   fixed   FERRY_BCAST_ALGORITHM=binomial FERRY_SCATTER_ALGORITHM=linear
#           FERRY_GATHER_ALGORITHM=linear
#   status  FERRY_BCAST_ALGORITHM=status_binomial FERRY_SCATTER_ALGORITHM=status_linear
#           FERRY_GATHER_ALGORITHM=status_linear
# and prints, per collective, size and interference (busy yes/no), the median over rounds
# of each run's medians (slowest rank; slowest rank outside the busy pair) and the
# improvement (T_fixed - T_status) / T_fixed, positive when the status-based one is faster.
#
# The status-based algorithms serve ranks in the free-first order the runtime gives them;
# a build that has no status source yet runs them in rank order (then they measure only
# their own overhead). The summary quotes the library and commit for that reason.
#
# Raw outputs go to DIR/raw/<fixed|status>.r<round>.txt, the table to DIR/summary.txt.

set -u

usage() {
    cat <<'EOF'
usage: bench/interference.sh [-o DIR] [-r ROUNDS] [-n RANKS] [-T TRIALS] [-s SIZES]
                             [-L BYTES] [-m COUNT] [-c COLLS]

  -o DIR      results directory (default: build/bench-interference)
  -r ROUNDS   rounds of runs, at least 3 (default: 3)
  -n RANKS    ranks (default: 8; at least 4)
  -T TRIALS   trials per collective, size and interference in one run (default: 20)
  -s SIZES    payload per rank, comma-separated (default: 4,16,64,256,1K,4K,16K,64K)
  -L BYTES    length of the interfering message (default: 16M)
  -m COUNT    interfering messages per trial (default: 1)
  -c COLLS    collectives, from bcast,scatter,gather (default: all three)
  -h          this text

environment: FERRY (default target/release/ferry), MPICC (default bin/mpicc)
EOF
}

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2

out=build/bench-interference
rounds=3
ranks=8
args=()
while getopts "o:r:n:T:s:L:m:c:h" opt; do
    case $opt in
        o) out=$OPTARG ;;
        r) rounds=$OPTARG ;;
        n) ranks=$OPTARG ;;
        T) args+=(-T "$OPTARG") ;;
        s) args+=(-s "$OPTARG") ;;
        L) args+=(-L "$OPTARG") ;;
        m) args+=(-n "$OPTARG") ;;
        c) args+=(-c "$OPTARG") ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
case "$rounds$ranks" in
    *[!0-9]*) echo "bench/interference.sh: -r and -n need numbers" >&2; exit 2 ;;
esac
if [ "$rounds" -lt 3 ]; then
    echo "bench/interference.sh: at least 3 rounds, so that a median means something" >&2
    exit 2
fi

FERRY=${FERRY:-target/release/ferry}
MPICC=${MPICC:-bin/mpicc}
cores=$(nproc 2> /dev/null || echo 1)

mkdir -p "$out/raw" "$out/bin" || exit 2
rm -f "$out"/raw/*.txt "$out"/raw/*.failed "$out"/raw/*.err
if ! "$MPICC" -Wall -Wextra -O2 -o "$out/bin/interference" bench/interference.c > "$out/bin/build.log" 2>&1; then
    echo "bench/interference.sh: building with $MPICC failed:"
    sed 's/^/    /' "$out/bin/build.log" | tail -n 10
    exit 1
fi

env_of() {
    case $1 in
        fixed) echo FERRY_BCAST_ALGORITHM=binomial FERRY_SCATTER_ALGORITHM=linear FERRY_GATHER_ALGORITHM=linear ;;
        status) echo FERRY_BCAST_ALGORITHM=status_binomial FERRY_SCATTER_ALGORITHM=status_linear FERRY_GATHER_ALGORITHM=status_linear ;;
    esac
}

failures=0
for ((round = 1; round <= rounds; round++)); do
    for variant in fixed status; do
        raw="$out/raw/$variant.r$round.txt"
        printf 'round %d/%d  %-7s ' "$round" "$rounds" "$variant"
        start=$(date +%s.%N)
        # shellcheck disable=SC2046 # the assignments are words on purpose
        if env $(env_of $variant) timeout 900 "$FERRY" run -n "$ranks" "$out/bin/interference" "${args[@]}" \
                > "$raw" 2> "$raw.err"; then
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

commit=$(git rev-parse --short HEAD 2> /dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2> /dev/null)" ]; then
    commit="$commit (with uncommitted changes)"
fi
summary="$out/summary.txt"
{
    echo "# bench/interference.sh: $ranks ranks on $(hostname) ($cores cores), $rounds rounds; Ferry commit $commit"
    for f in "$out"/raw/fixed.r1.txt; do
        [ -f "$f" ] && sed -n 's/^# library: /# library: /p; s/^# bench\/interference: /# /p' "$f"
    done
    [ "$ranks" -gt "$cores" ] && echo "# oversubscribed: $ranks ranks on $cores cores"
    echo "# fixed: $(env_of fixed)"
    echo "# status: $(env_of status)"
    echo "# figures: median over rounds of each run's median over trials (us);"
    echo "# max = slowest rank, others = slowest rank outside the busy pair (1 and 2);"
    echo "# gain = (fixed - status) / fixed: positive when the status-based algorithm is faster"
    for variant in fixed status; do
        for f in "$out"/raw/"$variant".r*.txt; do
            [ -f "$f" ] || continue
            grep -v '^#' "$f" | awk -v v="$variant" 'NF == 7 { print v, $1, $2, $3, $5, $6 }'
        done
    done | awk '
        function median(key,    n, k, j, t, v) {
            n = split(vals[key], v, " ")
            for (k = 2; k <= n; k++)
                for (j = k; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
                    t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
                }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        {
            row = $2 SUBSEP $3 SUBSEP $4
            if (!(row in seen)) { seen[row] = 1; rows[++nrows] = row }
            for (m = 0; m < 2; m++) {
                key = $1 SUBSEP row SUBSEP m
                vals[key] = (key in vals) ? vals[key] " " $(5 + m) : $(5 + m)
            }
        }
        END {
            printf "\n%-8s %-8s %-5s %12s %12s %8s %12s %12s %8s\n", "coll", "size", "busy",
                "fixed_max", "status_max", "gain", "fixed_oth", "status_oth", "gain"
            for (r = 1; r <= nrows; r++) {
                split(rows[r], rc, SUBSEP)
                printf "%-8s %-8s %-5s", rc[1], rc[2], rc[3]
                for (m = 0; m < 2; m++) {
                    f = "fixed" SUBSEP rows[r] SUBSEP m
                    s = "status" SUBSEP rows[r] SUBSEP m
                    if ((f in vals) && (s in vals)) {
                        a = median(f); b = median(s)
                        gain = a > 0 ? 100 * (a - b) / a : 0
                        printf " %12.1f %12.1f %+7.0f%%", a, b, gain
                    } else {
                        printf " %12s %12s %8s", "-", "-", "n/a"
                    }
                }
                printf "\n"
            }
        }'
} > "$summary"

echo
cat "$summary"
echo
echo "raw runs in $out/raw, table in $summary"
[ $failures -eq 0 ]
