#!/usr/bin/env bash
# The emulated clusters of tests/topology.sh come up, connect as intended and go away without
# a trace: up, check, down (also on failure or interrupt), then no `fy-` namespace is left and
# the root namespace gained no nftables table or link. Prints the time each step took.
# Usage: tests/topology-check.sh [--delay MS]   (root; iproute2, nftables, python3)
set -u
cd "$(dirname "$0")/.." || exit 2
topo=tests/topology.sh

# Where network namespaces cannot be made (no root, no CAP_NET_ADMIN) there is nothing to test.
probe=fy-probe-$$
if ! ip netns add "$probe" 2>/dev/null; then
  echo "skip topology: cannot create network namespaces here (needs root with CAP_NET_ADMIN)"
  exit 0
fi
ip netns del "$probe"

tables_before=$(nft list tables 2>/dev/null | sort)
links_before=$(ip -o link show | awk -F': ' '{print $2}' | sort)
trap 'bash "$topo" down' EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
step() {
  local name=$1 t0 rc
  shift
  t0=$(now)
  "$@"
  rc=$?
  printf "topology: %-5s %s s\n" "$name" "$(awk -v a="$(now)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')"
  return $rc
}

start=$(now)
fail=0
step up bash "$topo" up "$@" || fail=1
[ $fail = 0 ] && { step check bash "$topo" check || fail=1; }
step down bash "$topo" down || fail=1
trap - EXIT

left=$(ip netns list | awk '$1 ~ /^fy-/ {print $1}')
[ -z "$left" ] || { echo "FAIL topology: namespaces left: $left"; fail=1; }
[ "$(nft list tables 2>/dev/null | sort)" = "$tables_before" ] || { echo "FAIL topology: nftables tables changed in the root namespace"; fail=1; }
[ "$(ip -o link show | awk -F': ' '{print $2}' | sort)" = "$links_before" ] || { echo "FAIL topology: links changed in the root namespace"; fail=1; }
[ ! -e /run/fy-topology ] || { echo "FAIL topology: /run/fy-topology left"; fail=1; }

total=$(awk -v a="$(now)" -v b="$start" 'BEGIN { printf "%.2f", a - b }')
if [ $fail = 0 ]; then
  echo "ok   topology: two private clusters behind NAT and a public one, reachability as intended, nothing left ($total s)"
else
  echo "FAIL topology: ($total s)"
fi
exit $fail
