#!/usr/bin/env bash
# Emulated clusters on one machine (SEEDS.md S5, docs/clusters.md): two private clusters whose
# compute nodes reach the outside only through their front node's NAT, and a public cluster,
# all joined by a WAN. Every namespace and name starts with `fy-`, so nothing else is touched;
# a test runs a program on a node with `ip netns exec fy-c1-n1 <command>`.
#
#   tests/topology.sh up [--delay MS]   build it (MS: one-way netem delay on each WAN crossing)
#   tests/topology.sh check             verify who reaches whom, and from which address
#   tests/topology.sh down              remove everything (idempotent)
#   tests/topology.sh show              print the table of nodes and addresses
#   tests/topology.sh nat c1|c2 on|off  a front's NAT and firewall: off makes its cluster's
#                                       nodes public (routed, reachable from the WAN) over
#                                       the same links, for comparisons on one physical path
#
# Needs root, iproute2, nftables and python3 (the tiny TCP listener of `check`).
#
#   fy-c1-n1 10.1.0.11 --+                                      +-- fy-p-n1 198.51.100.21
#                        +-- fy-c1-front 10.1.0.1 | .11 --+     |
#   fy-c1-n2 10.1.0.12 --+        (NAT, firewall)         |     |
#                                                     fy-wan 198.51.100.1 (bridge wan0, router)
#   fy-c2-n1 10.2.0.11 --+                                |     |
#                        +-- fy-c2-front 10.2.0.1 | .12 --+     +-- fy-p-n2 198.51.100.22
#   fy-c2-n2 10.2.0.12 --+        (NAT, firewall)
#
# The WAN router knows the private prefixes (as a careless neighbour would), so that isolation
# rests on each front node's firewall (new connections from the WAN into its private network
# are rejected), not on missing routes.

set -euo pipefail

STATE=/run/fy-topology
PORT=7000
WAN_NET=198.51.100
CLUSTERS="c1 c2"
PUBLIC="p-n1 p-n2"

# name  address   role
nodes_table() {
  cat <<EOF
fy-wan       $WAN_NET.1    WAN bridge and router
fy-c1-front  $WAN_NET.11   front of c1 (private side 10.1.0.1)
fy-c1-n1     10.1.0.11       compute node of c1
fy-c1-n2     10.1.0.12       compute node of c1
fy-c2-front  $WAN_NET.12   front of c2 (private side 10.2.0.1)
fy-c2-n1     10.2.0.11       compute node of c2
fy-c2-n2     10.2.0.12       compute node of c2
fy-p-n1      $WAN_NET.21   public node
fy-p-n2      $WAN_NET.22   public node
EOF
}

all_ns() { nodes_table | awk '{print $1}'; }
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

die() { echo "topology: $*" >&2; exit 1; }

need_root_and_tools() {
  [ "$(id -u)" = 0 ] || die "must run as root (network namespaces)"
  for t in ip nft python3; do
    command -v "$t" >/dev/null || die "needs $t (apt-get install iproute2 nftables python3)"
  done
}

down() {
  local ns pids
  for ns in $(all_ns); do
    if ip netns list | grep -qw "^$ns"; then
      # Whatever still runs inside our own namespaces (listeners of an interrupted check).
      pids=$(ip netns pids "$ns" 2>/dev/null || true)
      [ -n "$pids" ] && kill $pids 2>/dev/null || true
      ip netns del "$ns" 2>/dev/null || true
    fi
  done
  rm -rf "$STATE"
}

# A veth pair with each end already in its namespace, named there.
link() { ip link add "$2" netns "$1" type veth peer name "$4" netns "$3"; }

front_rules() {
  local net=$1
  in_ns "fy-$2-front" nft -f - <<EOF
table ip fy {
  chain postrouting {
    type nat hook postrouting priority srcnat; policy accept;
    oifname "wan0" ip saddr $net masquerade
  }
  chain forward {
    type filter hook forward priority filter; policy accept;
    ct state established,related accept
    iifname "wan0" oifname "lan0" reject with icmp type admin-prohibited
  }
}
EOF
}

up() {
  local delay=""
  while [ $# -gt 0 ]; do
    case $1 in
      --delay) delay=${2:-}; shift 2 || die "--delay needs milliseconds" ;;
      *) die "unknown option $1" ;;
    esac
  done
  [ -z "$delay" ] || [[ $delay =~ ^[0-9]+$ ]] || die "--delay takes whole milliseconds"
  down
  building=1
  mkdir -p "$STATE"
  local ns
  for ns in $(all_ns); do
    ip netns add "$ns"
    in_ns "$ns" ip link set lo up
  done

  # The WAN: a bridge in fy-wan, one port per front or public node; fy-wan also routes.
  in_ns fy-wan ip link add wan0 type bridge
  in_ns fy-wan ip addr add "$WAN_NET.1/24" dev wan0
  in_ns fy-wan ip link set wan0 up
  in_ns fy-wan sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.send_redirects=0 net.ipv4.conf.wan0.send_redirects=0
  local c i member addr
  for member in c1-front:11 c2-front:12 p-n1:21 p-n2:22; do
    ns=fy-${member%%:*}
    addr=$WAN_NET.${member##*:}
    link fy-wan "${member%%:*}" "$ns" wan0
    in_ns fy-wan ip link set "${member%%:*}" master wan0 up
    in_ns "$ns" ip addr add "$addr/24" dev wan0
    in_ns "$ns" ip link set wan0 up
    in_ns "$ns" ip route add default via "$WAN_NET.1"
    if [ -n "$delay" ]; then
      # On the WAN side of each port: every crossing of the WAN waits once each way.
      in_ns fy-wan tc qdisc add dev "${member%%:*}" root netem delay "${delay}ms" 2>/dev/null ||
        die "cannot add a netem delay (is sch_netem in this kernel?)"
    fi
  done

  # Each private cluster: a bridge lan0 on its front node, which forwards and masquerades.
  for c in $CLUSTERS; do
    i=${c#c}
    in_ns "fy-$c-front" ip link add lan0 type bridge
    in_ns "fy-$c-front" ip addr add "10.$i.0.1/24" dev lan0
    in_ns "fy-$c-front" ip link set lan0 up
    in_ns "fy-$c-front" sysctl -qw net.ipv4.ip_forward=1
    for n in n1 n2; do
      link "fy-$c-front" "$n" "fy-$c-$n" lan0
      in_ns "fy-$c-front" ip link set "$n" master lan0 up
      in_ns "fy-$c-$n" ip addr add "10.$i.0.1${n#n}/24" dev lan0
      in_ns "fy-$c-$n" ip link set lan0 up
      in_ns "fy-$c-$n" ip route add default via "10.$i.0.1"
    done
    front_rules "10.$i.0.0/24" "$c"
    in_ns fy-wan ip route add "10.$i.0.0/24" via "$WAN_NET.1$i"
  done
  echo "${delay:-0}" >"$STATE/delay"
  building=0
  show
}

show() {
  printf '%-12s %-15s %s\n' NAMESPACE ADDRESS ROLE
  nodes_table | while read -r ns addr role; do printf '%-12s %-15s %s\n' "$ns" "$addr" "$role"; done
  if [ -s "$STATE/delay" ] && [ "$(cat "$STATE/delay")" != 0 ]; then
    echo "WAN delay: $(cat "$STATE/delay") ms each way"
  fi
}

# One listener per node: accepts connections and answers each with the peer's address.
LISTENER='
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", int(sys.argv[1]))); s.listen(16)
open(sys.argv[2], "w").close()
while True:
    c, peer = s.accept(); c.sendall((peer[0] + "\n").encode()); c.close()
'
# Prints "<peer address seen by the target> <connect ms>" or "blocked <why>".
PROBE='
import errno, socket, sys, time
t = time.monotonic()
try:
    c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3)
    ms = (time.monotonic() - t) * 1000
    print(c.makefile().readline().strip(), "%.1f" % ms)
except OSError as e:
    print("blocked", errno.errorcode.get(e.errno, "timeout"))
'

check() {
  [ -d "$STATE" ] || die "no topology (run: $0 up)"
  local ns ready="$STATE/ready" passed=0 failed=0
  rm -rf "$ready"
  mkdir -p "$ready"
  for ns in $(all_ns | grep -v '^fy-wan$'); do
    # Not through a function: $! must be the listener itself (ip netns exec execs it).
    ip netns exec "$ns" python3 -c "$LISTENER" "$PORT" "$ready/$ns" </dev/null &
    listeners="$listeners $!"
  done
  for _ in $(seq 100); do
    [ "$(ls "$ready" | wc -l)" -ge 8 ] && break
    sleep 0.05
  done
  [ "$(ls "$ready" | wc -l)" -ge 8 ] || die "listeners did not start"

  local delay rtt_min
  delay=$(cat "$STATE/delay" 2>/dev/null || echo 0)
  rtt_min=$((2 * delay * 9 / 10))
  # from  to-namespace  to-address  expected (peer address seen, or "blocked")  why
  printf '%-12s %-12s %-15s %-15s %15s  %s\n' FROM TO ADDRESS SEEN-AS 'CONNECT MS/WHY' RESULT
  while read -r from to addr want why; do
    local got seen ms verdict=ok
    got=$(in_ns "$from" python3 -c "$PROBE" "$addr" "$PORT" </dev/null)
    seen=${got%% *}
    ms=${got##* }
    if [ "$seen" != "$want" ]; then
      verdict="FAIL (wanted $want)"
    elif [ "$seen" != blocked ] && [ "$rtt_min" -gt 0 ] && crosses_wan "$from" "$to" &&
      ! awk -v m="$ms" -v r="$rtt_min" 'BEGIN { exit !(m >= r) }'; then
      verdict="FAIL (connect faster than the WAN delay)"
    fi
    printf '%-12s %-12s %-15s %-15s %15s  %s: %s\n' "$from" "$to" "$addr" "$seen" "$ms" "$verdict" "$why"
    if [ "$verdict" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  done <<EOF
fy-c1-n1    fy-c1-n2    10.1.0.12     10.1.0.11      same cluster
fy-c1-front fy-c1-n1    10.1.0.11     10.1.0.1       front to its own node
fy-c1-n1    fy-p-n1     $WAN_NET.21 $WAN_NET.11  private to public, through NAT
fy-c2-n2    fy-p-n2     $WAN_NET.22 $WAN_NET.12  private to public, through NAT
fy-c1-n2    fy-c2-front $WAN_NET.12 $WAN_NET.11  private to another front (proxy site)
fy-p-n1     fy-p-n2     $WAN_NET.22 $WAN_NET.21  public to public
fy-p-n2     fy-c1-front $WAN_NET.11 $WAN_NET.22  public to a front (proxy site)
fy-p-n1     fy-c1-n1    10.1.0.11     blocked        public to private
fy-c2-front fy-c1-n2    10.1.0.12     blocked        another front to private
fy-c2-n1    fy-c1-n1    10.1.0.11     blocked        private to private across clusters
fy-c1-n2    fy-c2-n2    10.2.0.12     blocked        private to private across clusters
EOF
  stop_listeners
  echo "$passed passed, $failed failed"
  [ "$failed" = 0 ]
}

stop_listeners() {
  if [ -n "$listeners" ]; then
    # shellcheck disable=SC2086
    kill $listeners 2>/dev/null || true
    wait $listeners 2>/dev/null || true
    listeners=""
  fi
}

# On any exit: no listener stays behind, and a half-built topology is removed.
on_exit() {
  local rc=$?
  stop_listeners
  if [ "$building" = 1 ]; then
    echo "topology: up failed; removing what was built" >&2
    down
  fi
  exit $rc
}

# Whether a connection between two nodes goes over the WAN (they are not in one cluster).
crosses_wan() {
  local a=${1#fy-} b=${2#fy-}
  [ "${a%%-*}" != "${b%%-*}" ] || [ "${a%%-*}" = p ]
}

building=0
listeners=""
trap on_exit EXIT
need_root_and_tools
# A front's NAT and firewall on or off; off, the WAN router's routes to the private prefix
# make its nodes reachable as if they had public addresses.
nat() {
  local c=${1:-} state=${2:-}
  case "$c/$state" in c1/on | c2/on | c1/off | c2/off) ;; *) die "usage: nat c1|c2 on|off" ;; esac
  [ -d "$STATE" ] || die "no topology (run: $0 up)"
  in_ns "fy-$c-front" nft delete table ip fy 2>/dev/null || true
  [ "$state" = off ] || front_rules "10.${c#c}.0.0/24" "$c"
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) down ;;
  check) check ;;
  show) show ;;
  nat) shift; nat "$@" ;;
  *) echo "usage: $0 up [--delay MS] | check | down | show | nat c1|c2 on|off" >&2; exit 2 ;;
esac
