#!/usr/bin/env bash
# S5's evaluation on the emulated clusters of tests/topology.sh (root): the same benchmarks
# over the ways between two clusters, in alternating rounds (direct nat relay relay2 direct
# ...), medians over rounds, and the ratios the targets name. Every setting runs on the same
# hosts, whose packets cross the same links and namespaces (node, its front, the WAN, the
# other front, node); what differs is what the fronts do and how the ranks connect:
#
#   direct  both fronts route without NAT or firewall (tests/topology.sh nat cN off): every
#           node is public and connects straight to every other.
#   nat     c1's front does NAT and refuses inbound connections, c2's routes: c2's nodes are
#           public, c1's private, ranks public first (S5's rank management): c1's ranks open
#           their connections outward through their front's NAT.
#   relay   both fronts do NAT: connections between the clusters go through the relay
#           (`ferry proxy`) on the front node of the lower rank's cluster.
#   relay2  as relay with two relays on each front node (the hostfile lists both): the
#           relayed pairs spread over them (4 ranks only; with 2 ranks there is one pair).
# With 2 ranks (bench/bandwidth.c, bench/latency.c) fy-c1-n1 and fy-c2-n1, one per cluster;
# with 4 ranks (bench/coll.c barrier and alltoall) fy-c1-n1, fy-c1-n2, fy-c2-n1, fy-c2-n2.
#
# Outputs: DIR/raw/<setting>.<bench>.<round>.txt, DIR/summary.md (the tables), DIR/command.txt.

set -u
usage() {
  cat <<'EOF'
usage: bench/clusters.sh [-o DIR] [-r ROUNDS] [-d MS] [-q]
  -o DIR     results directory (default: build/bench-clusters)
  -r ROUNDS  rounds of every setting (default: 3)
  -d MS      one-way delay on every WAN crossing (tc netem; needs sch_netem)
  -q         quick: 1 round, fewer sizes and iterations
EOF
}
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
out=build/bench-clusters
rounds=3
delay=""
quick=0
while getopts "o:r:d:qh" opt; do
  case $opt in
    o) out=$OPTARG ;;
    r) rounds=$OPTARG ;;
    d) delay=$OPTARG ;;
    q) quick=1; rounds=1 ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
FERRY=$repo/target/release/ferry
[ "$(id -u)" = 0 ] || { echo "bench/clusters.sh: needs root (network namespaces)" >&2; exit 2; }
[ -x "$FERRY" ] || { echo "bench/clusters.sh: build first (make build)" >&2; exit 2; }

mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
echo "bench/clusters.sh $*" >"$out/command.txt"
tmp=$(mktemp -d /tmp/ferry-bench-clusters.XXXXXX)
chmod 755 "$tmp"
proxies=()
cleanup() {
  for p in "${proxies[@]}"; do kill "$p" 2>/dev/null; done
  bash tests/topology.sh down
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -n "$delay" ]; then
  bash tests/topology.sh up --delay "$delay" >/dev/null || exit 1
else
  bash tests/topology.sh up >/dev/null || exit 1
fi

for b in bandwidth latency coll; do
  bin/mpicc -O2 -o "$tmp/$b" "bench/$b.c" || exit 1
done
"$FERRY" proxy --make-key "$tmp/site.key" >/dev/null || exit 1
for f in c1 c2; do
  for port in 7100 7101; do
    addr=198.51.100.1${f#c}
    ip netns exec "fy-$f-front" "$FERRY" proxy --listen "$addr:$port" --key-file "$tmp/site.key" >"$out/proxy-$f-$port.log" 2>&1 &
    proxies+=($!)
  done
done
sleep 0.3

# Hostfiles: <setting>.<ranks>
c1='front=fy-c1-front'
c2='front=fy-c2-front'
relays='proxy 198.51.100.11:7100 front=fy-c1-front\nproxy 198.51.100.12:7100 front=fy-c2-front\n'
printf 'fy-c1-n1\nfy-c2-n1\n' >"$tmp/direct.2"
printf 'fy-c1-n1\nfy-c1-n2\nfy-c2-n1\nfy-c2-n2\n' >"$tmp/direct.4"
printf "fy-c1-n1 $c1\nfy-c2-n1\n" >"$tmp/nat.2"
printf "fy-c1-n1 $c1\nfy-c1-n2 $c1\nfy-c2-n1\nfy-c2-n2\n" >"$tmp/nat.4"
printf "fy-c1-n1 $c1\nfy-c2-n1 $c2\n$relays" >"$tmp/relay.2"
printf "fy-c1-n1 $c1\nfy-c1-n2 $c1\nfy-c2-n1 $c2\nfy-c2-n2 $c2\n$relays" >"$tmp/relay.4"
{ cat "$tmp/relay.4"; printf 'proxy 198.51.100.11:7101 front=fy-c1-front\nproxy 198.51.100.12:7101 front=fy-c2-front\n'; } >"$tmp/relay2.4"
fronts() { bash tests/topology.sh nat c1 "$1" && bash tests/topology.sh nat c2 "$2"; }

if [ $quick = 1 ]; then
  bw_args="-m 1M -i 20"; lat_args="-m 1M -i 1000"; coll_args="-c barrier,alltoall -s 8,1K,64K,1M -i 200 -t 0.2"
else
  bw_args="-m 1M"; lat_args="-m 1M -i 5000"; coll_args="-c barrier,alltoall -s 8,64,512,4K,32K,256K,1M -t 0.5"
fi
run() { # SETTING RANKS BENCH ROUND ARGS...
  local setting=$1 n=$2 bench=$3 round=$4
  shift 4
  case $setting in
    direct) fronts off off ;;
    nat) fronts on off ;;
    *) fronts on on ;;
  esac
  ip netns exec fy-p-n1 "$FERRY" run --hostfile "$tmp/$setting.$n" --launcher 'ip netns exec {host}' \
    --proxy-key "$tmp/site.key" --rank-policy public-first --timeout 300 -n "$n" "$tmp/$bench" "$@" \
    >"$out/raw/$setting.$bench.$round.txt" 2>&1 || echo "FAIL $setting $bench round $round (see $out/raw/$setting.$bench.$round.txt)" >&2
}
for round in $(seq "$rounds"); do
  for setting in direct nat relay; do
    echo "round $round/$rounds: $setting" >&2
    run $setting 2 bandwidth "$round" $bw_args
    run $setting 2 latency "$round" $lat_args
    run $setting 4 coll "$round" $coll_args
  done
  echo "round $round/$rounds: relay2" >&2
  run relay2 4 coll "$round" $coll_args
done

# Median over rounds of every (setting, row) value.
medians() { # BENCH NAME -> "setting size median" lines
  for setting in direct nat relay relay2; do
    cat "$out"/raw/$setting.$1.*.txt 2>/dev/null | awk -v s=$setting -v name="$2" '$1 == "ROW" && $2 == name { print s, $4, $5 }'
  done | sort -k1,1 -k2,2n | awk '
    { key = $1 " " $2; n[key]++; v[key, n[key]] = $3; if (!(key in seen)) { seen[key] = 1; order[++k] = key } }
    END { for (i = 1; i <= k; i++) { key = order[i]; c = n[key];
            # a small insertion sort of the values of this key
            for (a = 1; a <= c; a++) x[a] = v[key, a];
            for (a = 2; a <= c; a++) { t = x[a]; b = a - 1; while (b >= 1 && x[b] > t) { x[b + 1] = x[b]; b-- } x[b + 1] = t }
            m = (c % 2) ? x[(c + 1) / 2] : (x[c / 2] + x[c / 2 + 1]) / 2; print key, m } }'
}
table() { # TITLE BENCH NAME UNIT HIGHER_IS_BETTER
  local title=$1 bench=$2 name=$3 unit=$4 higher=$5
  echo
  echo "### $title ($unit, median of $rounds)"
  echo
  echo "| size (B) | direct | nat | relay | nat / direct | relay / direct |"
  echo "|---:|---:|---:|---:|---:|---:|"
  medians "$bench" "$name" | awk -v higher="$higher" '
    { val[$1, $2] = $3; if (!($2 in seen)) { seen[$2] = 1; sizes[++k] = $2 } }
    END { for (i = 1; i <= k; i++) { s = sizes[i]; d = val["direct", s]; n = val["nat", s]; r = val["relay", s];
            rn = (d > 0 && n > 0) ? (higher ? n / d : d / n) : 0; rr = (d > 0 && r > 0) ? (higher ? r / d : d / r) : 0;
            printf "| %s | %s | %s | %s | %.2f | %.2f |\n", s, d, n, r, rn, rr } }'
}
{
  echo "# S5 micro-benchmarks on the emulated clusters"
  echo
  echo "$(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null), $(nproc) cores; WAN delay: ${delay:-none}."
  echo "Ratios are of performance: above 1 the setting beats direct (bandwidth: MB/s over MB/s; times: direct's time over the setting's)."
  table "Bandwidth, rank 0 -> rank 1 in another cluster" bandwidth bandwidth MB/s 1
  table "Latency, half round trip" latency latency us 0
  table "MPI_Alltoall, 4 ranks, 2 per cluster, average over ranks" coll alltoall.avg us 0
  table "MPI_Barrier, 4 ranks" coll barrier.avg us 0
  echo
  echo "### MPI_Alltoall through one relay per front vs two (us, median of $rounds)"
  echo
  echo "| size (B) | relay | relay2 | relay / relay2 |"
  echo "|---:|---:|---:|---:|"
  medians coll alltoall.avg | awk '
    { val[$1, $2] = $3; if (!($2 in seen)) { seen[$2] = 1; sizes[++k] = $2 } }
    END { for (i = 1; i <= k; i++) { s = sizes[i]; a = val["relay", s]; b = val["relay2", s];
            printf "| %s | %s | %s | %.2f |\n", s, a, b, (a > 0 && b > 0) ? a / b : 0 } }'
} >"$out/summary.md"
cat "$out/summary.md"
grep -h "ended:" "$out"/proxy-*.log | sed 's/^/relay: /' | tail -n 4 >&2
