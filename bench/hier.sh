#!/usr/bin/env bash
# The hierarchical collectives against the flat ones on the emulated clusters of
# tests/topology.sh (root): bench/coll.c's bcast and allreduce on 2 hosts x 2 ranks
# (fy-c1-n1, fy-c2-n1) and 3 hosts x 2 ranks (and fy-p-n2), every front routing without NAT
# (the direct setting of bench/clusters.sh), with three choices of algorithm alternating run
# by run:
#
#   hier   FERRY_BCAST_ALGORITHM=hier, FERRY_ALLREDUCE_ALGORITHM=hier
#   tree   the flat trees: binomial, recursive_doubling
#   large  the flat algorithms for large messages: scatter_allgather, ring
#
# Prints, per layout, collective and size, the median over rounds of the slowest rank's
# mean time per call (us) and hier / the faster flat one (below 1: the hierarchy wins).
# Raw outputs in DIR/raw, the table in DIR/summary.md.
set -u
usage() {
  cat <<'EOF'
usage: bench/hier.sh [-o DIR] [-r ROUNDS] [-d MS] [-s SIZES]
  -o DIR     results directory (default: build/bench-hier)
  -r ROUNDS  rounds (default: 3)
  -d MS      one-way delay on every WAN crossing (tc netem; needs sch_netem)
  -s SIZES   block sizes, as bench/coll.c takes them (default: 8,1K,64K,1M)
EOF
}
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
out=build/bench-hier
rounds=3
delay=""
sizes=8,1K,64K,1M
while getopts "o:r:d:s:h" opt; do
  case $opt in
    o) out=$OPTARG ;;
    r) rounds=$OPTARG ;;
    d) delay=$OPTARG ;;
    s) sizes=$OPTARG ;;
    h) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
FERRY=$repo/target/release/ferry
[ "$(id -u)" = 0 ] || { echo "bench/hier.sh: needs root (network namespaces)" >&2; exit 2; }
[ -x "$FERRY" ] || { echo "bench/hier.sh: build first (make build)" >&2; exit 2; }
mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
echo "bench/hier.sh $*" >"$out/command.txt"
tmp=$(mktemp -d /tmp/ferry-bench-hier.XXXXXX)
chmod 755 "$tmp"
cleanup() {
  bash tests/topology.sh down
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bash tests/topology.sh up ${delay:+--delay "$delay"} >/dev/null || exit 1
bash tests/topology.sh nat c1 off && bash tests/topology.sh nat c2 off || exit 1
bin/mpicc -O2 -o "$tmp/coll" bench/coll.c || exit 1
printf 'fy-c1-n1 slots=2\nfy-c2-n1 slots=2\n' >"$tmp/hosts.2x2"
printf 'fy-c1-n1 slots=2\nfy-c2-n1 slots=2\nfy-p-n2 slots=2\n' >"$tmp/hosts.3x2"

choice() { # NAME -> the environment assignments
  case $1 in
    hier) echo "FERRY_BCAST_ALGORITHM=hier FERRY_ALLREDUCE_ALGORITHM=hier" ;;
    tree) echo "FERRY_BCAST_ALGORITHM=binomial FERRY_ALLREDUCE_ALGORITHM=recursive_doubling" ;;
    large) echo "FERRY_BCAST_ALGORITHM=scatter_allgather FERRY_ALLREDUCE_ALGORITHM=ring" ;;
  esac
}
for round in $(seq "$rounds"); do
  for layout in 2x2 3x2; do
    n=$(( ${layout%x*} * ${layout#*x} ))
    for c in hier tree large; do
      echo "round $round/$rounds: $layout $c" >&2
      # shellcheck disable=SC2046
      env $(choice $c) ip netns exec fy-p-n1 "$FERRY" run --hostfile "$tmp/hosts.$layout" \
        --launcher 'ip netns exec {host}' --timeout 300 -n "$n" "$tmp/coll" -T -c bcast,allreduce -s "$sizes" -t 0.5 \
        >"$out/raw/$layout.$c.$round.txt" 2>&1 || echo "FAIL $layout $c round $round (see $out/raw/$layout.$c.$round.txt)" >&2
    done
  done
done

{
  echo "# Hierarchical against flat collectives on the emulated clusters"
  echo
  echo "$(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null), $(nproc) cores; WAN delay: ${delay:-none}; \`bench/hier.sh $*\`."
  echo "Slowest rank's mean time per call (us), median of $rounds rounds; ratio: hier / the faster flat choice."
  echo
  echo "| layout | call | size (B) | hier | tree | large | hier / best flat |"
  echo "|---|---|---:|---:|---:|---:|---:|"
  for layout in 2x2 3x2; do
    for c in hier tree large; do
      cat "$out"/raw/$layout.$c.*.txt 2>/dev/null | awk -v l=$layout -v c=$c '$1 == "bcast" || $1 == "allreduce" { print l, $1, $2, c, $6 }'
    done
  done | sort -k1,1 -k2,2 -k3,3n -k4,4 -k5,5g | awk '
    { key = $1 " " $2 " " $3 " " $4; n[key]++; v[key, n[key]] = $5; if (!(($1 " " $2 " " $3) in seen)) { seen[$1 " " $2 " " $3] = 1; rows[++k] = $1 " " $2 " " $3 } }
    END {
      for (i = 1; i <= k; i++) {
        split(rows[i], f, " ")
        for (j = 1; j <= 3; j++) {
          c = (j == 1) ? "hier" : (j == 2) ? "tree" : "large"; key = rows[i] " " c; m = n[key]
          med[c] = (m == 0) ? 0 : (m % 2) ? v[key, (m + 1) / 2] : (v[key, m / 2] + v[key, m / 2 + 1]) / 2
        }
        best = (med["tree"] < med["large"]) ? med["tree"] : med["large"]
        printf "| %s | %s | %s | %.2f | %.2f | %.2f | %.2f |\n", f[1], f[2], f[3], med["hier"], med["tree"], med["large"], (best > 0) ? med["hier"] / best : 0
      }
    }'
} >"$out/summary.md"
cat "$out/summary.md"
