#!/usr/bin/env bash
# Point-to-point benchmarks side by side: builds bench/latency.c and
# bench/bandwidth.c with each available MPI implementation's own compiler
# (Ferry: bin/mpicc; MPICH: mpicc.mpich; Open MPI: mpicc.openmpi), runs them
# on 2 ranks, alternating implementations run by run (A B C A B C ...) so
# that drifts of the machine hit all of them alike, and prints the median of
# the rounds per message size and implementation, plus the ratios
# Ferry/Open MPI and Ferry/MPICH for 8-byte latency and 1 MiB bandwidth.
#
# -t tcp (the default): every implementation on TCP over the loopback device:
#   Ferry     FERRY_TRANSPORTS=tcp target/release/ferry run -n 2
#   MPICH     UCX_TLS=tcp,self UCX_NET_DEVICES=lo timeout 120 mpiexec.mpich -n 2
#   Open MPI  mpirun.openmpi --allow-run-as-root --mca pml ob1 --mca btl tcp,self
#             --mca btl_tcp_if_include lo -n 2
# -t shm: every implementation on its shared-memory path between two ranks of
# this host, plus bench/memcpy.c (one thread's memcpy, the physical ceiling)
# for the bandwidth:
#   Ferry     FERRY_TRANSPORTS=shm,tcp target/release/ferry run -n 2
#   MPICH     timeout 120 mpiexec.mpich -n 2 (UCX picks shared memory itself)
#   Open MPI  mpirun.openmpi --allow-run-as-root --mca pml ob1 --mca btl vader,self -n 2
# An implementation whose tools are missing is reported and left out.
#
# Raw outputs go to DIR/raw/<impl>.<bench>.<round>.txt, the table to
# DIR/summary.txt.

set -u

usage() {
    cat <<'EOF'
usage: bench/run.sh [-t tcp|shm] [-o DIR] [-r ROUNDS] [-m MAXSIZE] [-i ITERS] [-I IMPLS]

  -t ROUTE    tcp: all on TCP over loopback (default); shm: all on shared
              memory, with the memcpy ceiling

  -o DIR      results directory (default: build/bench)
  -r ROUNDS   rounds of runs per implementation, at least 3 (default: 3)
  -m MAXSIZE  largest message, passed to both benchmarks (default: theirs, 4M)
  -i ITERS    iterations for small messages, passed to both benchmarks
  -I IMPLS    implementations to try, comma-separated (default:
              ferry,mpich,openmpi)
  -h          this text

environment: FERRY (default target/release/ferry), MPICC (default bin/mpicc)
EOF
}

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2

out=build/bench
rounds=3
route=tcp
bench_args=()
impls=ferry,mpich,openmpi
while getopts "t:o:r:m:i:I:h" opt; do
    case $opt in
        t) route=$OPTARG ;;
        o) out=$OPTARG ;;
        r) rounds=$OPTARG ;;
        m) bench_args+=(-m "$OPTARG") ;;
        i) bench_args+=(-i "$OPTARG") ;;
        I) impls=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
case "$rounds" in
    ''|*[!0-9]*) echo "bench/run.sh: -r needs a number" >&2; exit 2 ;;
esac
case "$route" in
    tcp|shm) ;;
    *) echo "bench/run.sh: -t takes tcp or shm" >&2; exit 2 ;;
esac
[ "$route" = shm ] && impls="$impls,memcpy"
if [ "$rounds" -lt 3 ]; then
    echo "bench/run.sh: at least 3 rounds, so that a median means something" >&2
    exit 2
fi

FERRY=${FERRY:-target/release/ferry}
MPICC=${MPICC:-bin/mpicc}
benches=(latency bandwidth)

have() { command -v "$1" > /dev/null 2>&1 || [ -x "$1" ]; }

compiler_of() {
    case $1 in
        ferry) echo "$MPICC" ;;
        mpich) echo mpicc.mpich ;;
        openmpi) echo mpicc.openmpi ;;
        memcpy) echo "${CC:-cc}" ;;
    esac
}

label_of() {
    case $1 in
        ferry) echo Ferry ;;
        mpich) echo MPICH ;;
        openmpi) echo "Open MPI" ;;
        memcpy) echo memcpy ;;
    esac
}

# launch IMPL PROGRAM ARGS...: 2 ranks on the chosen route.
launch() {
    local impl=$1
    shift
    case $impl-$route in
        ferry-tcp)
            FERRY_TRANSPORTS=tcp timeout 300 "$FERRY" run -n 2 "$@" ;;
        ferry-shm)
            FERRY_TRANSPORTS=shm,tcp timeout 300 "$FERRY" run -n 2 "$@" ;;
        mpich-tcp)
            UCX_TLS=tcp,self UCX_NET_DEVICES=lo timeout 120 mpiexec.mpich -n 2 "$@" ;;
        mpich-shm)
            timeout 120 mpiexec.mpich -n 2 "$@" ;;
        openmpi-tcp)
            timeout 300 mpirun.openmpi --allow-run-as-root --mca pml ob1 --mca btl tcp,self \
                --mca btl_tcp_if_include lo -n 2 "$@" ;;
        openmpi-shm)
            timeout 300 mpirun.openmpi --allow-run-as-root --mca pml ob1 --mca btl vader,self -n 2 "$@" ;;
        memcpy-*)
            timeout 300 "$@" ;;
    esac
}

# The benchmarks IMPL runs: the memcpy ceiling has only a bandwidth.
benches_of() {
    if [ "$1" = memcpy ]; then echo bandwidth; else echo "${benches[@]}"; fi
}

mkdir -p "$out/raw" "$out/bin" || exit 2
rm -f "$out"/raw/*.txt

# ---- which implementations, and build ---------------------------------------

active=()
IFS=, read -r -a wanted <<< "$impls"
for impl in "${wanted[@]}"; do
    case $impl in
        ferry)
            missing=""
            have "$MPICC" || missing="$MPICC"
            have "$FERRY" || missing="$missing${missing:+, }$FERRY"
            ;;
        mpich)
            missing=""
            have mpicc.mpich || missing=mpicc.mpich
            have mpiexec.mpich || missing="$missing${missing:+, }mpiexec.mpich"
            ;;
        openmpi)
            missing=""
            have mpicc.openmpi || missing=mpicc.openmpi
            have mpirun.openmpi || missing="$missing${missing:+, }mpirun.openmpi"
            ;;
        memcpy)
            missing=""
            have "${CC:-cc}" || missing="${CC:-cc}"
            ;;
        *)
            echo "bench/run.sh: unknown implementation '$impl'" >&2
            exit 2 ;;
    esac
    if [ -n "$missing" ]; then
        echo "$(label_of "$impl"): skipped, $missing not found"
        continue
    fi
    cc=$(compiler_of "$impl")
    mkdir -p "$out/bin/$impl"
    ok=1
    for b in $(benches_of "$impl"); do
        src="bench/$b.c"
        [ "$impl" = memcpy ] && src=bench/memcpy.c
        if ! "$cc" -Wall -Wextra -O2 -o "$out/bin/$impl/$b" "$src" > "$out/bin/$impl/$b.log" 2>&1; then
            echo "$(label_of "$impl"): skipped, building $b with $cc failed:"
            sed 's/^/    /' "$out/bin/$impl/$b.log" | tail -n 10
            ok=0
            break
        fi
    done
    if [ $ok -eq 1 ]; then
        active+=("$impl")
        echo "$(label_of "$impl"): built with $cc"
    fi
done

if [ ${#active[@]} -eq 0 ]; then
    echo "bench/run.sh: no MPI implementation available"
    exit 1
fi

# ---- runs, alternating implementations ---------------------------------------

failures=0
for ((round = 1; round <= rounds; round++)); do
    for impl in "${active[@]}"; do
        for b in $(benches_of "$impl"); do
            raw="$out/raw/$impl.$b.$round.txt"
            printf 'round %d/%d  %-8s %-9s ' "$round" "$rounds" "$impl" "$b"
            start=$(date +%s.%N)
            if launch "$impl" "$out/bin/$impl/$b" "${bench_args[@]}" > "$raw" 2> "$raw.err"; then
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

# ---- medians and ratios -------------------------------------------------------

summary="$out/summary.txt"
{
    echo "# bench/run.sh: 2 ranks on $(hostname), $rounds rounds, median per size"
    if [ "$route" = tcp ]; then
        echo "# transports: Ferry tcp; MPICH UCX tcp over lo; Open MPI btl tcp over lo"
    else
        echo "# transports: Ferry shm; MPICH UCX default (shared memory); Open MPI btl vader; memcpy: one thread's memcpy"
    fi
    for impl in "${active[@]}"; do
        for f in "$out"/raw/"$impl".latency.1.txt; do
            [ -f "$f" ] && sed -n "s/^# library: /# $impl library: /p" "$f"
        done
    done
    for b in "${benches[@]}"; do
        for impl in "${active[@]}"; do
            for f in "$out"/raw/"$impl.$b".*.txt; do
                [ -f "$f" ] || continue
                awk -v i="$impl" -v b="$b" '$1 == "ROW" && NF == 5 { print b, i, $4, $5 }' "$f"
            done
        done
    done | awk -v impls="${active[*]}" '
        function median(key,    n, k, j, t, v) {
            n = split(vals[key], v, " ")
            for (k = 2; k <= n; k++)            # insertion sort, n is small
                for (j = k; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
                    t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
                }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        {
            key = $1 SUBSEP $2 SUBSEP $3
            vals[key] = (key in vals) ? vals[key] " " $4 : $4
            if (!(($1 SUBSEP $3) in seen)) {
                seen[$1 SUBSEP $3] = 1
                sizes[$1] = ($1 in sizes) ? sizes[$1] " " $3 : $3
            }
        }
        END {
            ni = split(impls, im, " ")
            nb = split("latency bandwidth", bs, " ")
            for (bi = 1; bi <= nb; bi++) {
                b = bs[bi]
                if (!(b in sizes)) continue
                printf "\n# %s (%s)\n", b, b == "latency" ? "us, lower is better" : "MB/s, higher is better"
                printf "%-10s", "size"
                for (k = 1; k <= ni; k++) printf " %12s", im[k]
                printf "\n"
                ns = split(sizes[b], sz, " ")
                for (s = 1; s <= ns; s++) {
                    printf "%-10s", sz[s]
                    for (k = 1; k <= ni; k++) {
                        key = b SUBSEP im[k] SUBSEP sz[s]
                        if (key in vals) {
                            m = median(key)
                            med[key] = m
                            printf " %12.2f", m
                        } else {
                            printf " %12s", "-"
                        }
                    }
                    printf "\n"
                }
            }
            printf "\n# ratios (Ferry / other; latency: below 1 is better, bandwidth: above 1 is better)\n"
            split("latency 8 8_B_latency bandwidth 1048576 1_MiB_bandwidth bandwidth 4194304 4_MiB_bandwidth", r, " ")
            for (q = 0; q < 3; q++) {
                b = r[3 * q + 1]; s = r[3 * q + 2]; name = r[3 * q + 3]
                gsub("_", " ", name)
                fk = b SUBSEP "ferry" SUBSEP s
                line = sprintf("%-16s", name)
                split("openmpi mpich memcpy", others, " ")
                for (o = 1; o <= 3; o++) {
                    ok = b SUBSEP others[o] SUBSEP s
                    if (others[o] == "memcpy" && !(ok in med)) continue
                    label = others[o] == "openmpi" ? "Ferry/OpenMPI" : others[o] == "mpich" ? "Ferry/MPICH" : "Ferry/memcpy"
                    if ((fk in med) && (ok in med) && med[ok] > 0)
                        line = line sprintf("  %s %.2f", label, med[fk] / med[ok])
                    else
                        line = line sprintf("  %s n/a", label)
                }
                print line
            }
        }'
} > "$summary"

echo
cat "$summary"
echo
echo "raw runs in $out/raw, table in $summary"
[ $failures -eq 0 ]
