#!/usr/bin/env bash
# Ferry programs launched by MPICH's Hydra across emulated hosts (tests/topology.sh): mpiexec.hydra
# runs in one network namespace and starts its proxies in others through
# tests/hydra/netns-launcher.sh (its `ssh`), which gives each namespace its own FERRY_HOST_ID.
# Each case runs a point-to-point and a collective C test on 4 ranks and checks that every rank
# joined one job, advertised its own host's address, and shared memory only with the ranks of
# its own host (so that ranks of different hosts talked over TCP); then that a rank killed on
# one host ends the job within 2 s though Hydra does not see it die. The topology is torn down
# on any exit, and nothing of it may be left.
# Usage: tests/hydra-hosts.sh   (root; iproute2, nftables, python3, mpich)
set -u
cd "$(dirname "$0")/.." || exit 2
start=$(date +%s.%N)
topo=tests/topology.sh
launcher=$PWD/tests/hydra/netns-launcher.sh
HYDRA=${HYDRA:-/usr/bin/mpiexec.hydra}

skip() { echo "skip hydra-hosts: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
[ -x "$HYDRA" ] || skip "$HYDRA not found (apt-get install mpich)"
probe=fy-probe-$$
ip netns add "$probe" 2>/dev/null || skip "cannot create network namespaces here (needs CAP_NET_ADMIN)"
ip netns del "$probe"

work=$(mktemp -d /tmp/ferry-hydra.XXXXXX)
cleanup() {
  local rc=$?
  bash "$topo" down
  left=$(ip netns list | awk '$1 ~ /^fy-/ { print $1 }')
  if [ -n "$left" ]; then echo "FAIL hydra-hosts: namespaces left: $left"; rc=1; fi
  left=$(pgrep -f "$work/" | tr '\n' ' ')
  if [ -n "$left" ]; then
    echo "FAIL hydra-hosts: processes left (killed): $left"
    kill -KILL $left 2>/dev/null
    rc=1
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

pass=0 fail=0
ok() { echo "ok   hydra-hosts: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL hydra-hosts: $*"; fail=$((fail + 1)); }

[ -e lib/libmpi.so.12 ] || { echo "FAIL hydra-hosts: Ferry is not built (make build)"; exit 1; }
for p in p2p_basic coll_allgather dead_peer; do
  bin/mpicc -O2 -Wall -o "$work/$p" "tests/c/$p.c" || { echo "FAIL hydra-hosts: cannot compile $p"; exit 1; }
done
bash "$topo" up >/dev/null || { echo "FAIL hydra-hosts: topology up"; exit 1; }

# The address of each emulated host, as tests/topology.sh lays them out.
declare -A addr=([fy-p-n1]=198.51.100.21 [fy-p-n2]=198.51.100.22 [fy-c1-front]=198.51.100.11
  [fy-c1-n1]=10.1.0.11 [fy-c1-n2]=10.1.0.12)

# Rank r runs on host r mod #hosts (Hydra's default placement, one slot per host).
# run_case NAME WHERE LOCAL HOSTS: run both programs with mpiexec in namespace WHERE, which the
# proxies reach at LOCAL, on 4 ranks over the comma-separated HOSTS.
run_case() {
  local name=$1 where=$2 local=$3 hosts=$4 p t0 secs rc out err r q h nh why n_local hl
  IFS=, read -r -a hl <<<"$hosts"
  nh=${#hl[@]}
  for p in p2p_basic coll_allgather; do
    out=$work/$name.$p.out err=$work/$name.$p.err
    t0=$(date +%s.%N)
    FERRY_LOG=info timeout -k 5 60 ip netns exec "$where" "$HYDRA" -launcher ssh -launcher-exec "$launcher" \
      -localhost "$local" -hosts "$hosts" -n 4 "$work/$p" >"$out" 2>"$err"
    rc=$?
    secs=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
    why=""
    [ $rc = 0 ] || why="exit $rc"
    for r in 0 1 2 3; do
      h=${hl[r % nh]}
      grep -q "ferry\[rank $r\].*rank $r of 4 listening on ${addr[$h]}:" "$err" ||
        why="$why; rank $r did not join from $h (${addr[$h]})"
    done
    # A rank shares memory only with the ranks of its own host.
    for r in 0 1 2 3; do
      n_local=0
      for q in 0 1 2 3; do [ $((q % nh)) = $((r % nh)) ] && [ $q != $r ] && n_local=$((n_local + 1)); done
      if [ $n_local = 0 ]; then
        ! grep -q "ferry\[rank $r\].*sharing memory" "$err" || why="$why; rank $r shares memory though alone on its host"
      else
        grep -q "ferry\[rank $r\].*sharing memory with $n_local local ranks" "$err" ||
          why="$why; rank $r does not share memory with exactly the $n_local other rank(s) of its host"
      fi
    done
    grep -q FAIL "$err" && why="$why; the program reported a failure"
    if [ -z "$why" ]; then
      ok "$name: $p -n 4 on $hosts, mpiexec on $where ($secs s)"
    else
      bad "$name: $p -n 4 on $hosts, mpiexec on $where: ${why#; } ($secs s)"
      tail -n 12 "$out" "$err" | sed 's/^/    | /'
    fi
  done
}

# Two public hosts, mpiexec on one of them.
run_case public fy-p-n1 198.51.100.21 fy-p-n1,fy-p-n2
# A private cluster's nodes, mpiexec on a public host: the proxies connect back through the NAT.
run_case private fy-p-n1 198.51.100.21 fy-c1-n1,fy-c1-n2
# Three hosts of one cluster, one of them its front node (two interfaces), mpiexec there.
run_case front fy-c1-front 10.1.0.1 fy-c1-front,fy-c1-n1,fy-c1-n2

# A rank killed across hosts (tests/c/dead_peer.c on 4 ranks over two public hosts: rank 1
# shares its host with rank 3, ranks 0 and 2 reach it over TCP), each rank started by a shell
# that goes on after it, so that Hydra sees no death and only Ferry's engines notice: the job
# must end within 2 s of the kill, non-zero, naming rank 1.
for w in any allreduce; do
  out=$work/dead_peer.$w.out err=$work/dead_peer.$w.err
  rm -f "$work/stamp"
  DEAD_PEER_WAIT=$w DEAD_PEER_STAMP=$work/stamp timeout -k 5 60 ip netns exec fy-p-n1 "$HYDRA" -launcher ssh -launcher-exec "$launcher" \
    -localhost 198.51.100.21 -hosts fy-p-n1,fy-p-n2 -n 4 sh -c "$work/dead_peer; exec sleep 30" >"$out" 2>"$err"
  rc=$?
  end=$(date +%s.%N)
  killed=$(cat "$work/stamp" 2>/dev/null)
  secs=$(awk -v a="$end" -v b="${killed:-0}" 'BEGIN { printf "%.2f", a - b }')
  if [ -n "$killed" ] && [ $rc != 0 ] && [ $rc != 124 ] && awk -v s="$secs" 'BEGIN { exit !(s < 2) }' &&
    grep -v '^dead_peer: ' "$err" | grep -q 'rank 1 '; then
    ok "dead_peer $w -n 4 on fy-p-n1,fy-p-n2, rank 1 killed: ends $secs s after the kill, exit $rc"
  else
    bad "dead_peer $w -n 4 on fy-p-n1,fy-p-n2: exit $rc, $secs s after the kill (wanted non-zero within 2 s, naming rank 1)"
    tail -n 12 "$out" "$err" | sed 's/^/    | /'
  fi
done

total=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }')
echo "$pass passed, $fail failed ($total s)"
[ $fail = 0 ]
