#!/usr/bin/env bash
# The overlap benchmark (bench/overlap.c) side by side: Ferry without and with
# FERRY_ASYNC_PROGRESS, and MPICH and Open MPI on their shared-memory paths, 2
# ranks, alternating run by run; prints the median over the rounds of the
# fraction of the transfer hidden behind computation, and of the transfer time
# alone, per size.
#
#   usage: bench/overlap.sh [-o DIR] [-r ROUNDS] [-m MAXSIZE] [-t tcp|shm]
#
# -t tcp runs every implementation on TCP over loopback instead (as bench/run.sh).

set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
out=build/bench-overlap
rounds=3
max=16M
route=shm
while getopts "o:r:m:t:h" opt; do
    case $opt in
        o) out=$OPTARG ;;
        r) rounds=$OPTARG ;;
        m) max=$OPTARG ;;
        t) route=$OPTARG ;;
        h) sed -n '2,10p' "$0"; exit 0 ;;
        *) exit 2 ;;
    esac
done
FERRY=${FERRY:-target/release/ferry}
MPICC=${MPICC:-bin/mpicc}
mkdir -p "$out/raw" "$out/bin"
rm -f "$out"/raw/*

have() { command -v "$1" > /dev/null 2>&1 || [ -x "$1" ]; }
impls=()
"$MPICC" -O2 -Wall -o "$out/bin/ferry" bench/overlap.c && impls+=(ferry ferry-async)
have mpicc.mpich && have mpiexec.mpich && mpicc.mpich -O2 -o "$out/bin/mpich" bench/overlap.c && impls+=(mpich)
have mpicc.openmpi && have mpirun.openmpi && mpicc.openmpi -O2 -o "$out/bin/openmpi" bench/overlap.c && impls+=(openmpi)

launch() {
    case $1-$route in
        ferry-shm) FERRY_TRANSPORTS=shm,tcp FERRY_ASYNC_PROGRESS=0 timeout 300 "$FERRY" run -n 2 "$out/bin/ferry" -m "$max" ;;
        ferry-async-shm) FERRY_TRANSPORTS=shm,tcp FERRY_ASYNC_PROGRESS=1 timeout 300 "$FERRY" run -n 2 "$out/bin/ferry" -m "$max" ;;
        ferry-tcp) FERRY_TRANSPORTS=tcp FERRY_ASYNC_PROGRESS=0 timeout 300 "$FERRY" run -n 2 "$out/bin/ferry" -m "$max" ;;
        ferry-async-tcp) FERRY_TRANSPORTS=tcp FERRY_ASYNC_PROGRESS=1 timeout 300 "$FERRY" run -n 2 "$out/bin/ferry" -m "$max" ;;
        mpich-shm) timeout 300 mpiexec.mpich -n 2 "$out/bin/mpich" -m "$max" ;;
        mpich-tcp) UCX_TLS=tcp,self UCX_NET_DEVICES=lo timeout 300 mpiexec.mpich -n 2 "$out/bin/mpich" -m "$max" ;;
        openmpi-shm) timeout 300 mpirun.openmpi --allow-run-as-root --mca pml ob1 --mca btl vader,self -n 2 "$out/bin/openmpi" -m "$max" ;;
        openmpi-tcp) timeout 300 mpirun.openmpi --allow-run-as-root --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo -n 2 "$out/bin/openmpi" -m "$max" ;;
    esac
}

for ((r = 1; r <= rounds; r++)); do
    for i in "${impls[@]}"; do
        printf 'round %d/%d %-12s ' "$r" "$rounds" "$i"
        if launch "$i" > "$out/raw/$i.$r.txt" 2> "$out/raw/$i.$r.err"; then echo ok; else echo "FAILED (see $out/raw/$i.$r.err)"; fi
    done
done

{
    echo "# bench/overlap.sh: 2 ranks on $(hostname), route $route, $rounds rounds, medians"
    echo "# hidden: fraction of the transfer time covered by computation (1 = all); t_comm: transfer alone, us"
    for i in "${impls[@]}"; do
        cat "$out"/raw/"$i".*.txt 2>/dev/null | awk -v i="$i" '!/^#/ && NF == 5 { print i, $1, $2, $5 }'
    done | awk -v impls="${impls[*]}" '
        function median(s,    n, v, k, j, t) {
            n = split(s, v, " ")
            for (k = 2; k <= n; k++) for (j = k; j > 1 && v[j-1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
            return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
        }
        { h[$1, $2] = h[$1, $2] " " $4; c[$1, $2] = c[$1, $2] " " $3; if (!($2 in seen)) { seen[$2] = 1; order[++ns] = $2 } }
        END {
            ni = split(impls, im, " ")
            printf "%-9s", "size"
            for (k = 1; k <= ni; k++) printf " %20s", im[k] " hidden/t_comm"
            printf "\n"
            for (s = 1; s <= ns; s++) {
                printf "%-9s", order[s]
                for (k = 1; k <= ni; k++)
                    if ((im[k], order[s]) in h) printf " %11.2f /%7.1f", median(h[im[k], order[s]]), median(c[im[k], order[s]])
                    else printf " %20s", "-"
                printf "\n"
            }
        }'
} > "$out/summary.txt"
cat "$out/summary.txt"
