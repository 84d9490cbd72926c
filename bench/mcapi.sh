#!/usr/bin/env bash
# The S4 evaluation of the MCAPI library: MCAPI message latency, packet-channel throughput and
# scalar-channel interval, on shared memory and on TCP over loopback, beside their ceilings and
# Ferry's MPI on the same route. Builds the programs, runs them in alternating rounds
# (A B C ... A B C ...) so that drifts of the machine hit all alike, and writes the median
# over rounds per size, with the target ratios.
#
# Runs per round, in this order (2 nodes / ranks each, `ferry run -n 2`):
#   mcapi-shm  bench/mcapi/{msg_pingpong,pkt_throughput,scl_interval}, default transports
#              (FERRY_TRANSPORTS unset: shared memory between the two nodes)
#   mcapi-tcp  the same with FERRY_TRANSPORTS=tcp (TCP over loopback)
#   raw-tcp    bench/mcapi/raw_tcp pingpong and stream (a plain socket, the TCP ceiling)
#   mpi-shm    bench/latency.c and bench/bandwidth.c built with bin/mpicc, default transports
#   mpi-tcp    the same with FERRY_TRANSPORTS=tcp
#   memcpy     bench/memcpy.c (one thread's memcpy, the shared-memory ceiling)
# Sizes: latency 1 B .. 64 KiB, throughput 1 KiB .. 256 KiB, doubling.
#
# Raw outputs go to DIR/raw/<config>.<bench>.<round>.txt (bench: latency, throughput,
# scalar), the tables to DIR/summary.txt, the options to DIR/command.txt, and each run's time,
# exit status and the machine's load average after it to DIR/runs.txt.

set -u

usage() {
    cat <<'EOF'
usage: bench/mcapi.sh [-o DIR] [-r ROUNDS] [-i ITERS] [-b BYTES] [-n COUNT] [-T SECONDS]
                      [-C CONFIGS] [-k SECONDS] [-q] [-S]

  -o DIR      results directory (default: build/bench-mcapi)
  -r ROUNDS   rounds of runs per configuration (default: 3)
  -i ITERS    ping-pong round trips per size, MCAPI, raw TCP and MPI (default: 10000)
  -b BYTES    bytes per packet / chunk size, MCAPI packets and raw TCP stream (default: 1G)
  -n COUNT    scalar values in the stream (default: 100000)
  -T SECONDS  MCAPI message and packet runs stop a size after this long and report what
              they timed (default: 5; 0: no limit); an MCAPI node that makes no progress
              for 3 x SECONDS + 30 s on one size ends itself and names the size
              (FERRY_BENCH_WATCHDOG, see bench/mcapi/mcapibench.h)
  -C CONFIGS  configurations to run, comma-separated (default:
              mcapi-shm,mcapi-tcp,raw-tcp,mpi-shm,mpi-tcp,memcpy)
  -k SECONDS  a run still going after this long is stopped and counted as failed; the
              sizes it finished still count (default: 300)
  -q          quick: -i 1000 -b 32M -n 10000 -T 1 -k 120 (options after -q still apply)
  -S          no runs: only the tables again, from the raw outputs already in DIR
  -h          this text

environment: FERRY (default target/release/ferry), MCAPICC (default bin/mcapicc),
MPICC (default bin/mpicc), CC (default cc)
EOF
}

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2

out=build/bench-mcapi
rounds=3
iters=10000
bytes=1G
count=100000
limit=5
kill_after=300
configs=mcapi-shm,mcapi-tcp,raw-tcp,mpi-shm,mpi-tcp,memcpy
summary_only=0
while getopts "o:r:i:b:n:T:C:k:qSh" opt; do
    case $opt in
        o) out=$OPTARG ;;
        r) rounds=$OPTARG ;;
        i) iters=$OPTARG ;;
        b) bytes=$OPTARG ;;
        n) count=$OPTARG ;;
        T) limit=$OPTARG ;;
        C) configs=$OPTARG ;;
        k) kill_after=$OPTARG ;;
        q) iters=1000; bytes=32M; count=10000; limit=1; kill_after=120 ;;
        S) summary_only=1 ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
case "$rounds" in
    ''|0|*[!0-9]*) echo "bench/mcapi.sh: -r needs a positive number" >&2; exit 2 ;;
esac

FERRY=${FERRY:-target/release/ferry}
MCAPICC=${MCAPICC:-bin/mcapicc}
MPICC=${MPICC:-bin/mpicc}
CC=${CC:-cc}
bin=$out/bin
if [ $summary_only -eq 1 ]; then
    [ -f "$out/command.txt" ] || { echo "bench/mcapi.sh: no earlier run in $out" >&2; exit 2; }
    rounds=$(sed -n 's/^# bench\/mcapi.sh -r \([0-9]*\) -i \([0-9]*\) -b \([^ ]*\) .*/\1 \2 \3/p' "$out/command.txt")
    read -r rounds iters bytes <<< "$rounds"
    configs=$(sed -n 's/^# bench\/mcapi.sh .* -C \([^ ]*\)$/\1/p' "$out/command.txt")
fi

IFS=, read -r -a active <<< "$configs"
for c in "${active[@]}"; do
    case $c in
        mcapi-shm|mcapi-tcp|raw-tcp|mpi-shm|mpi-tcp|memcpy) ;;
        *) echo "bench/mcapi.sh: unknown configuration '$c'" >&2; exit 2 ;;
    esac
done

failures=0
if [ $summary_only -eq 0 ]; then
mkdir -p "$out/raw" "$bin" || exit 2
rm -f "$out"/raw/*
echo "# round config bench seconds exit_status loadavg_1min_5min_15min" > "$out/runs.txt"

# ---- build --------------------------------------------------------------------------------

build() { # build NAME COMPILER SOURCE
    if ! $2 -Wall -Wextra -O2 -o "$bin/$1" "$3" > "$bin/$1.log" 2>&1; then
        echo "bench/mcapi.sh: building $1 from $3 with $2 failed:" >&2
        tail -n 20 "$bin/$1.log" >&2
        exit 1
    fi
}
for p in msg_pingpong pkt_throughput scl_interval; do
    build "$p" "$MCAPICC" "bench/mcapi/$p.c"
done
build raw_tcp "$CC" bench/mcapi/raw_tcp.c
build latency "$MPICC" bench/latency.c
build bandwidth "$MPICC" bench/bandwidth.c
build memcpy "$CC" bench/memcpy.c
[ -x "$FERRY" ] || { echo "bench/mcapi.sh: $FERRY not found (make build)" >&2; exit 1; }

# ---- the runs -----------------------------------------------------------------------------

# launch ROUTE PROGRAM ARGS...: two nodes / ranks under the launcher on shm (default
# transports) or tcp.
launch() {
    local route=$1
    shift
    if [ "$route" = tcp ]; then
        FERRY_TRANSPORTS=tcp timeout "$kill_after" "$FERRY" run -n 2 "$@"
    else
        env -u FERRY_TRANSPORTS timeout "$kill_after" "$FERRY" run -n 2 "$@"
    fi
}

watchdog=$(awk -v t="$limit" 'BEGIN { print (t > 0 ? int(3 * t + 30) : 0) }')

# run_one CONFIG BENCH: one program of a configuration, on stdout.
run_one() {
    local route=${1#*-}
    case $1.$2 in
        mcapi-*.latency) FERRY_BENCH_WATCHDOG=$watchdog launch "$route" "$bin/msg_pingpong" -i "$iters" -T "$limit" ;;
        mcapi-*.throughput) FERRY_BENCH_WATCHDOG=$watchdog launch "$route" "$bin/pkt_throughput" -b "$bytes" -T "$limit" ;;
        mcapi-*.scalar) FERRY_BENCH_WATCHDOG=$watchdog launch "$route" "$bin/scl_interval" -n "$count" -i "$iters" ;;
        raw-tcp.latency) timeout "$kill_after" "$bin/raw_tcp" pingpong -i "$iters" ;;
        raw-tcp.throughput) timeout "$kill_after" "$bin/raw_tcp" stream -b "$bytes" ;;
        mpi-*.latency) launch "$route" "$bin/latency" -s 1 -m 64K -i "$iters" ;;
        mpi-*.throughput) launch "$route" "$bin/bandwidth" -s 1K -m 256K ;;
        memcpy.throughput) timeout "$kill_after" "$bin/memcpy" -m 256K ;;
    esac
}

benches_of() {
    case $1 in
        mcapi-*) echo latency throughput scalar ;;
        memcpy) echo throughput ;;
        *) echo latency throughput ;;
    esac
}

{
    echo "# bench/mcapi.sh -r $rounds -i $iters -b $bytes -n $count -T $limit -k $kill_after -C $configs"
    echo "# $(date -u '+%Y-%m-%d %H:%M UTC') on $(hostname), $(nproc) cores, $(git rev-parse --short HEAD)"
} > "$out/command.txt"

for ((round = 1; round <= rounds; round++)); do
    for c in "${active[@]}"; do
        for b in $(benches_of "$c"); do
            raw="$out/raw/$c.$b.$round.txt"
            printf 'round %d/%d  %-10s %-10s ' "$round" "$rounds" "$c" "$b"
            start=$(date +%s.%N)
            run_one "$c" "$b" > "$raw" 2> "$raw.err"
            rc=$?
            end=$(date +%s.%N)
            # Other work on the machine moves the figures: keep the load beside each run.
            printf '%d %s %s %.1f %d %s\n' "$round" "$c" "$b" \
                "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$rc" \
                "$(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/runs.txt"
            if [ $rc -eq 0 ]; then
                awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f s\n", b - a }'
                [ -s "$raw.err" ] || rm -f "$raw.err"
            else
                if [ $rc -eq 124 ]; then
                    echo "stopped after $kill_after s (-k): still running" >> "$raw.err"
                else
                    echo "exit status $rc" >> "$raw.err"
                fi
                awk -v a="$start" -v b="$end" -v rc=$rc -v f="$raw.err" \
                    'BEGIN { printf "FAILED after %.1f s (exit status %d; see %s)\n", b - a, rc, f }'
                mv "$raw" "$raw.failed"
                failures=$((failures + 1))
            fi
        done
    done
done

fi

# ---- medians and target ratios ------------------------------------------------------------

# Every result as `bench config size value [count]`: the MPI programs print ROW lines, the
# others `size value ...`. A failed run still gives the sizes it finished. Ping-pong
# medians within a run become the bench latency_median.
for f in "$out"/raw/*.txt "$out"/raw/*.txt.failed; do
    [ -f "$f" ] || continue
    base=${f##*/}
    IFS=. read -r c b _ <<< "$base"
    awk -v c="$c" -v b="$b" '
        /^#/ || NF < 2 { next }
        $1 == "ROW" && b == "throughput" && $4 + 0 < 1024 { next }   # memcpy starts at 1 B
        $1 == "ROW" { print b, c, $4, $5; next }
        b == "scalar" { print b, c, $1, $3; next }
        { print b, c, $1, $2, (NF >= 3 ? $3 : "")
          if (b == "latency" && NF >= 4) print "latency_median", c, $1, $4 }' "$f"
done > "$out/all.txt"

summary=$out/summary.txt
awk -v configs="${active[*]}" -v iters="$iters" -v bytes="$bytes" -v rounds="$rounds" '
    function median(key,    n, k, j, t, v) {
        n = split(vals[key], v, " ")
        for (k = 2; k <= n; k++)
            for (j = k; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
                t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
            }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    function has(b, c, s) { return (b SUBSEP c SUBSEP s) in vals }
    function med(b, c, s) { return median(b SUBSEP c SUBSEP s) }
    function cell(b, c, s, fmt) { return has(b, c, s) ? sprintf(fmt, med(b, c, s)) : sprintf("%12s", "-") }
    function ratio(b1, c1, b2, c2, s) {
        if (!has(b1, c1, s) || !has(b2, c2, s) || med(b2, c2, s) == 0) return ""
        return med(b1, c1, s) / med(b2, c2, s)
    }
    function rcell(r) { return r == "" ? sprintf("%10s", "n/a") : sprintf("%10.2f", r) }
    function verdict(r, ok) { return r == "" ? "NOT MEASURED" : ok ? "met" : "MISSED" }
    {
        key = $1 SUBSEP $2 SUBSEP $3
        vals[key] = (key in vals) ? vals[key] " " $4 : $4
        n_runs[key]++
        if (!(($1 SUBSEP $3) in seen)) {
            seen[$1 SUBSEP $3] = 1
            sizes[$1] = ($1 in sizes) ? sizes[$1] " " $3 : $3
        }
        if ($5 != "" && (($1 == "latency" && $5 + 0 < iters + 0) ||
                         ($1 == "throughput" && $2 ~ /^mcapi/ && $5 + 0 < bytes_n)))
            capped[$1 " " $2 " " $3] = capped[$1 " " $2 " " $3] " " $5
    }
    BEGIN {
        b = bytes; m = 1
        if (b ~ /[kK]$/) m = 1024; else if (b ~ /[mM]$/) m = 1048576; else if (b ~ /[gG]$/) m = 1073741824
        bytes_n = (b + 0) * m
        nc = split(configs, cf, " ")
    }
    END {
        printf "# median over %d rounds per size; 2 nodes / ranks on one host\n", rounds
        printf "\n# message latency, one way (us, lower is better): MCAPI mcapi_msg_send/recv ping-pong,\n"
        printf "# raw-tcp socket ping-pong, Ferry MPI bench/latency; half the mean round trip\n"
        printf "%-8s %12s %12s %12s %12s %12s %10s\n", "size", "mcapi-shm", "mcapi-tcp", "raw-tcp", "mpi-shm", "mpi-tcp", "tcp/raw"
        ns = split(sizes["latency"], sz, " ")
        worst = ""; met = 0; tot = 0
        for (i = 1; i <= ns; i++) {
            s = sz[i]
            r = ratio("latency", "mcapi-tcp", "latency", "raw-tcp", s)
            printf "%-8s %s %s %s %s %s %s\n", s, cell("latency", "mcapi-shm", s, "%12.2f"),
                cell("latency", "mcapi-tcp", s, "%12.2f"), cell("latency", "raw-tcp", s, "%12.2f"),
                cell("latency", "mpi-shm", s, "%12.2f"), cell("latency", "mpi-tcp", s, "%12.2f"), rcell(r)
            if (r != "") { tot++; if (r <= 1.2) met++; if (worst == "" || r > worst) { worst = r; worst_s = s } }
        }
        if ("latency_median" in sizes) {
            printf "\n# message latency, half the median round trip within a run (us)\n"
            printf "%-8s %12s %12s %12s %10s\n", "size", "mcapi-shm", "mcapi-tcp", "raw-tcp", "tcp/raw"
            ns = split(sizes["latency_median"], sz, " ")
            for (i = 1; i <= ns; i++) {
                s = sz[i]
                printf "%-8s %s %s %s %s\n", s, cell("latency_median", "mcapi-shm", s, "%12.2f"),
                    cell("latency_median", "mcapi-tcp", s, "%12.2f"), cell("latency_median", "raw-tcp", s, "%12.2f"),
                    rcell(ratio("latency_median", "mcapi-tcp", "latency_median", "raw-tcp", s))
            }
        }
        printf "\n# throughput (MB/s, 1 MB = 10^6 B, higher is better): MCAPI packet channel, raw-tcp\n"
        printf "# socket stream, Ferry MPI bench/bandwidth (windows of 64), memcpy (one thread)\n"
        printf "%-8s %12s %12s %12s %12s %12s %12s %10s %10s\n", "size", "mcapi-shm", "mcapi-tcp", "raw-tcp",
            "mpi-shm", "mpi-tcp", "memcpy", "tcp/raw", "shm/memcpy"
        ns = split(sizes["throughput"], sz, " ")
        for (i = 1; i <= ns; i++) {
            s = sz[i]
            printf "%-8s %s %s %s %s %s %s %s %s\n", s, cell("throughput", "mcapi-shm", s, "%12.1f"),
                cell("throughput", "mcapi-tcp", s, "%12.1f"), cell("throughput", "raw-tcp", s, "%12.1f"),
                cell("throughput", "mpi-shm", s, "%12.1f"), cell("throughput", "mpi-tcp", s, "%12.1f"),
                cell("throughput", "memcpy", s, "%12.1f"),
                rcell(ratio("throughput", "mcapi-tcp", "throughput", "raw-tcp", s)),
                rcell(ratio("throughput", "mcapi-shm", "throughput", "memcpy", s))
        }
        printf "\n# scalar channel, uint64 (stream: ns per value; ping-pong: us one way)\n"
        printf "%-20s %12s %12s\n", "measure", "mcapi-shm", "mcapi-tcp"
        split("stream_interval_ns pingpong_latency_us", ms, " ")
        for (i = 1; i <= 2; i++)
            printf "%-20s %s %s\n", ms[i], cell("scalar", "mcapi-shm", ms[i], "%12.1f"), cell("scalar", "mcapi-tcp", ms[i], "%12.2f")

        printf "\n# targets\n"
        r = ratio("throughput", "mcapi-tcp", "throughput", "raw-tcp", 32768)
        printf "packets tcp / raw stream at 32 KiB      >= 0.95: %s  %s\n", rcell(r), verdict(r, r >= 0.95)
        if (tot > 0)
            printf "message latency tcp / raw ping-pong     <= 1.20: worst %.2f at %s B; %d of %d sizes met  %s\n",
                worst, worst_s, met, tot, met == tot ? "met" : "MISSED"
        else
            printf "message latency tcp / raw ping-pong     <= 1.20: n/a  NOT MEASURED\n"
        r = ratio("latency", "mcapi-shm", "latency", "mpi-shm", 8)
        printf "shm message 8 B latency / MPI 8 B       <= 1.00: %s  %s\n", rcell(r), verdict(r, r <= 1.0)
        r = ratio("throughput", "mcapi-shm", "throughput", "memcpy", 32768)
        printf "shm packets / memcpy at 32 KiB          >= 0.70: %s  %s\n", rcell(r), verdict(r, r >= 0.70)
        mn = ""
        ns = split(sizes["throughput"], sz, " ")
        for (i = 1; i <= ns; i++) {
            q = ratio("throughput", "mcapi-shm", "throughput", "memcpy", sz[i])
            if (q != "" && (mn == "" || q < mn)) { mn = q; mn_s = sz[i] }
        }
        if (mn != "")
            printf "shm packets / memcpy, lowest over sizes >= 0.70: %10.2f at %s B  %s\n", mn, mn_s, verdict(mn, mn >= 0.70)
        nk = 0
        for (k in capped) nk++
        if (nk > 0) {
            printf "\n# runs that hit the time limit (-T) and timed less (config size: round trips or bytes per run)\n"
            for (k in capped) print "# " k ":" capped[k]
        }
    }' "$out/all.txt" > "$summary"

# Failed runs: the last size each finished, and what it said.
for f in "$out"/raw/*.txt.failed; do
    [ -f "$f" ] || continue
    name=${f##*/}
    name=${name%.txt.failed}
    last=$(grep -v '^#' "$f" | tail -n 1 | awk '{ print $1 }')
    printf '# FAILED %s (last size finished: %s): %s\n' "$name" "${last:-none}" \
        "$(tr '\n' ' ' < "$out/raw/${name}.txt.err")"
done > "$out/failed.txt"
if [ -s "$out/failed.txt" ]; then
    { echo; echo "# failed runs (their finished sizes are in the tables)"; cat "$out/failed.txt"; } >> "$summary"
fi

echo
cat "$out/command.txt" "$summary"
echo
echo "raw runs in $out/raw, table in $summary"
[ $failures -eq 0 ] || { echo "$failures run(s) failed"; exit 1; }
