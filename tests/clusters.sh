#!/usr/bin/env bash
# One Ferry job across the emulated clusters of tests/topology.sh (two private clusters behind
# NAT and a public one; root): `ferry run --hostfile` with an agent per namespace, relays
# (`ferry proxy`) on both front nodes, S5's paths checked as shown and as taken (bytes counted
# at the relays), C tests passing across all three clusters, the failure paths (a rank killed
# on a remote host, an agent killed, a relay killed, the head killed: each ends the job within
# seconds, naming what was lost, and leaves no process in any namespace), hostile clients at a
# relay while a job runs through it, and the ssh launcher against real sshds in namespaces.
#
# Usage: tests/clusters.sh [FILTER...]   (needs target/release/ferry and bin/mpicc built)
set -u
cd "$(dirname "$0")/.." || exit 2
repo=$PWD
FERRY=$repo/target/release/ferry
. tests/runner-lib.sh
filters=("$@")

probe=fy-probe-$$
if ! ip netns add "$probe" 2>/dev/null; then
  echo "skip clusters: cannot create network namespaces here (needs root with CAP_NET_ADMIN)"
  exit 0
fi
ip netns del "$probe"

tmp=$(mktemp -d /tmp/ferry-clusters.XXXXXX)
chmod 755 "$tmp"
proxy_pids=()
cleanup() {
  for p in "${proxy_pids[@]}"; do kill "$p" 2>/dev/null; done
  [ -f "$tmp/sshd-pids" ] && xargs -r kill <"$tmp/sshd-pids" 2>/dev/null
  bash tests/topology.sh down
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bash tests/topology.sh up >/dev/null || { echo "FAIL clusters: the topology did not come up"; exit 1; }

passed=0
failed=0
ok() { echo "ok   clusters: $1"; passed=$((passed + 1)); }
bad() {
  echo "FAIL clusters: $1"
  failed=$((failed + 1))
  [ -n "${2:-}" ] && show_tail "$2" output
}

# Every namespace of the topology: what still runs there besides the relays.
leftovers() {
  local ns pid
  for ns in $(ip netns list | awk '$1 ~ /^fy-/ {print $1}'); do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      case " ${proxy_pids[*]} $(cat "$tmp/sshd-pids" 2>/dev/null | tr '\n' ' ') " in *" $pid "*) continue ;; esac
      echo "$ns:$pid:$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-60)"
    done
  done
}
# Wait up to $1 seconds for every namespace to be empty of job processes.
no_leftovers_within() {
  local i
  for i in $(seq $(($1 * 10))); do
    [ -z "$(leftovers)" ] && return 0
    sleep 0.1
  done
  return 1
}

for prog in p2p_basic sizes nonovertaking coll_bcast coll_alltoall coll_reduce coll_allgather coll_nonblocking rma_fence rma_passive split_hosts; do
  bin/mpicc -O2 -o "$tmp/$prog" "tests/c/$prog.c" || { echo "FAIL clusters: cannot build $prog"; exit 1; }
done
bin/mpicc -O2 -o "$tmp/spin" tests/clusters/spin.c || { echo "FAIL clusters: cannot build spin"; exit 1; }

# Relays: two on c1's front (pairs spread over them), one on c2's.
"$FERRY" proxy --make-key "$tmp/site.key" || { echo "FAIL clusters: cannot make a site key"; exit 1; }
start_proxy() { # NAMESPACE ADDR:PORT LOG
  ip netns exec "$1" "$FERRY" proxy --listen "$2" --key-file "$tmp/site.key" >"$3" 2>&1 &
  proxy_pids+=($!)
}
start_proxy fy-c1-front 198.51.100.11:7100 "$tmp/proxy-c1a.log"
start_proxy fy-c1-front 198.51.100.11:7101 "$tmp/proxy-c1b.log"
start_proxy fy-c2-front 198.51.100.12:7100 "$tmp/proxy-c2.log"

cat >"$tmp/hosts" <<EOF
# two private clusters and two public hosts
fy-c1-n1 front=fy-c1-front
fy-c1-n2 front=fy-c1-front
fy-c2-n1 front=fy-c2-front
fy-c2-n2 front=fy-c2-front
fy-p-n1
fy-p-n2
proxy 198.51.100.11:7100 front=fy-c1-front
proxy 198.51.100.11:7101 front=fy-c1-front
proxy 198.51.100.12:7100 front=fy-c2-front
EOF
# The head runs on a public node: it reaches every front's relay.
job() { # LOG ARGS...: run a job from fy-p-n1 across the clusters
  local log=$1
  shift
  ip netns exec fy-p-n1 "$FERRY" run --hostfile "$tmp/hosts" --launcher 'ip netns exec {host}' \
    --proxy-key "$tmp/site.key" "$@" >"$log" 2>&1
}
relayed_bytes() { # total of the relays' "job ... ended" lines so far
  cat "$tmp"/proxy-*.log | awk '/job [0-9a-f]+ ended:/ { for (i = 1; i < NF; i++) if ($(i+1) == "bytes") s += $i } END { print s + 0 }'
}
relayed_pairs() {
  cat "$tmp"/proxy-*.log | awk '/job [0-9a-f]+ ended:/ { for (i = 1; i < NF; i++) if ($(i+1) == "pairs,") s += $i } END { print s + 0 }'
}
sleep 0.3

# 1. The paths shown are S5's, for both rank orders.
if selected paths; then
  expect_public_first="1 -> 0: direct
2 -> 0: through the NAT of fy-c1-front
2 -> 1: through the NAT of fy-c1-front
3 -> 0: through the NAT of fy-c1-front
3 -> 1: through the NAT of fy-c1-front
3 -> 2: direct
4 -> 0: through the NAT of fy-c2-front
4 -> 1: through the NAT of fy-c2-front
4 -> 2: through the proxy on fy-c1-front
4 -> 3: through the proxy on fy-c1-front
5 -> 0: through the NAT of fy-c2-front
5 -> 1: through the NAT of fy-c2-front
5 -> 2: through the proxy on fy-c1-front
5 -> 3: through the proxy on fy-c1-front
5 -> 4: direct"
  job "$tmp/paths.log" --rank-policy public-first --show-paths --timeout 60 -n 6 "$tmp/p2p_basic"
  rc=$?
  got=$(sed -n 's/^  \([0-9]* -> [0-9]*: .*\)$/\1/p' "$tmp/paths.log" | sort -t' ' -k1,1n -k3,3n)
  if [ $rc = 0 ] && [ "$got" = "$expect_public_first" ] && grep -q "rank 5: fy-c2-front/fy-c2-n2" "$tmp/paths.log"; then
    ok "paths with --rank-policy public-first: private hosts take ranks 2-5, 4 pairs through a relay"
  else
    bad "paths with --rank-policy public-first (exit $rc)" "$tmp/paths.log"
  fi
  job "$tmp/paths-given.log" --show-paths --timeout 60 -n 6 "$tmp/p2p_basic"
  rc=$?
  proxied=$(grep -c "through the proxy" "$tmp/paths-given.log")
  if [ $rc = 0 ] && [ "$proxied" = 12 ] && grep -q "4 -> 0: through the proxy on fy-c1-front" "$tmp/paths-given.log"; then
    ok "paths in the hostfile's order: public ranks 4, 5 reach private ones through relays (12 pairs)"
  else
    bad "paths in the hostfile's order (exit $rc, $proxied relayed pairs)" "$tmp/paths-given.log"
  fi
fi

# 2. C tests across the three clusters, with the relays carrying the bytes they should.
if selected ctests; then
  for prog in p2p_basic sizes nonovertaking coll_bcast coll_alltoall coll_reduce coll_allgather coll_nonblocking rma_fence rma_passive split_hosts; do
    before=$(relayed_bytes)
    t0=$(now_ns)
    job "$tmp/$prog.log" --rank-policy public-first --timeout 120 -n 6 "$tmp/$prog"
    rc=$?
    secs=$(awk -v a="$(now_ns)" -v b="$t0" 'BEGIN { printf "%.2f", (a - b) / 1e9 }')
    sleep 0.2 # the relays log a job's end when the head's control connection closes
    after=$(relayed_bytes)
    if [ $rc = 0 ] && [ "$after" -gt "$before" ]; then
      ok "$prog -n 6 across 3 clusters ($secs s, $((after - before)) bytes relayed)"
    else
      bad "$prog -n 6 across 3 clusters (exit $rc, relayed $((after - before)) bytes)" "$tmp/$prog.log"
    fi
  done
  # The hardware split saw each of the six hosts as one resource.
  if grep -q "split_hosts: 6 host(s)" "$tmp/split_hosts.log"; then
    ok "split_hosts found the 6 hosts"
  else
    bad "split_hosts found the 6 hosts" "$tmp/split_hosts.log"
  fi
  # Both relays of c1 carried pairs.
  if grep -q "ended:" "$tmp/proxy-c1a.log" && [ "$(awk '/ended:/ && $0 !~ / 0 pairs/' "$tmp/proxy-c1a.log" | wc -l)" -gt 0 ] &&
    [ "$(awk '/ended:/ && $0 !~ / 0 pairs/' "$tmp/proxy-c1b.log" | wc -l)" -gt 0 ]; then
    ok "the pairs relayed through c1 spread over its two relays"
  else
    bad "the pairs relayed through c1 spread over its two relays" "$tmp/proxy-c1b.log"
  fi
  # With public-first ranks, only the 4 pairs between c1 and c2 go through a relay.
  pairs_before=$(relayed_pairs)
  job "$tmp/alltoall-pairs.log" --rank-policy public-first --timeout 120 -n 6 "$tmp/coll_alltoall"
  sleep 0.2
  pairs=$(($(relayed_pairs) - pairs_before))
  if [ "$pairs" = 4 ]; then ok "exactly the 4 pairs between the private clusters were relayed"; else bad "relayed pairs: $pairs, expected 4" "$tmp/alltoall-pairs.log"; fi
fi

# 3. Failures end the job within seconds, naming the cause, and leave nothing behind.
expect_failure() { # NAME LOG RC START_NS PATTERN
  local name=$1 log=$2 rc=$3 t0=$4 pattern=$5 secs
  secs=$(awk -v a="$(now_ns)" -v b="$t0" 'BEGIN { printf "%.1f", (a - b) / 1e9 }')
  if [ "$rc" != 0 ] && grep -q "$pattern" "$log" && awk -v s="$secs" 'BEGIN { exit !(s < 15) }' && no_leftovers_within 5; then
    ok "$name: exit $rc after $secs s: $(grep -m1 "$pattern" "$log" | cut -c1-110)"
  else
    bad "$name (exit $rc after $secs s; left: $(leftovers | tr '\n' ' '))" "$log"
  fi
}
# Starts a job of spinning ranks in the background and waits until all have started.
spin_job() { # LOG
  job "$1" --rank-policy public-first --timeout 60 -n 6 "$tmp/spin" &
  job_pid=$!
  for _ in $(seq 100); do
    [ "$(cat "$1" 2>/dev/null | grep -c spinning)" -ge 6 ] && return 0
    sleep 0.1
  done
  return 1
}
pid_in() { # NAMESPACE PATTERN: a process of the namespace whose command line matches
  local pid
  for pid in $(ip netns pids "$1"); do
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$2" && { echo "$pid"; return; }
  done
}
if selected failures; then
  t0=$(now_ns)
  spin_job "$tmp/kill-rank.log"
  kill -9 "$(pid_in fy-c2-n1 "$tmp/spin")" 2>/dev/null
  { wait $job_pid; } 2>/dev/null
  expect_failure "a rank killed on a private host" "$tmp/kill-rank.log" $? "$t0" "(pid [0-9]* on fy-c2-n1) was killed by signal 9"

  t0=$(now_ns)
  spin_job "$tmp/kill-agent.log"
  kill -9 "$(pid_in fy-c1-n2 "ferry agent")" 2>/dev/null
  { wait $job_pid; } 2>/dev/null
  expect_failure "an agent killed" "$tmp/kill-agent.log" $? "$t0" "lost host fy-c1-n2 (its agent was killed by signal 9"

  t0=$(now_ns)
  spin_job "$tmp/kill-head.log"
  kill -9 "$(pid_in fy-p-n1 "ferry run")" 2>/dev/null
  { wait $job_pid; } 2>/dev/null
  rc=$?
  secs=$(awk -v a="$(now_ns)" -v b="$t0" 'BEGIN { printf "%.1f", (a - b) / 1e9 }')
  if no_leftovers_within 5; then ok "the head killed: every agent and rank gone within 5 s"; else bad "the head killed: left $(leftovers | tr '\n' ' ')"; fi

  t0=$(now_ns)
  spin_job "$tmp/kill-proxy.log"
  kill -9 "${proxy_pids[2]}" 2>/dev/null
  { wait $job_pid; } 2>/dev/null
  expect_failure "a relay killed" "$tmp/kill-proxy.log" $? "$t0" "lost the relay at 198.51.100.12:7100 (front fy-c2-front)"
  start_proxy fy-c2-front 198.51.100.12:7100 "$tmp/proxy-c2.log.2"
  sleep 0.3
fi

# 4. Hostile clients at a live relay while a job runs through it: each refused or throttled
# and logged, the job unharmed.
if selected hostile; then
  job "$tmp/hostile-job.log" --rank-policy public-first --timeout 120 -n 6 "$tmp/sizes" &
  job_pid=$!
  ip netns exec fy-p-n2 python3 tests/clusters/hostile_relay.py 198.51.100.11 7100 "$tmp/site.key" >"$tmp/hostile.log" 2>&1
  hrc=$?
  { wait $job_pid; } 2>/dev/null
  rc=$?
  if [ $rc = 0 ] && [ $hrc = 0 ]; then
    ok "hostile clients at a relay: $(tail -n 1 "$tmp/hostile.log"); the job passed"
  else
    bad "hostile clients at a relay (job exit $rc, attacker exit $hrc)" "$tmp/hostile.log"
    show_tail "$tmp/hostile-job.log" job
  fi
  for reason in "denied connection from 198.51.100.22.*bad magic" "denied relay request from 198.51.100.22.*no such job" \
    "denied control connection from 198.51.100.22.*wrong site key" "throttled .* from 198.51.100.22"; do
    if grep -q "$reason" "$tmp/proxy-c1a.log"; then
      ok "the relay logged: $(grep -m1 "$reason" "$tmp/proxy-c1a.log" | sed 's/.*\] //' | cut -c1-100)"
    else
      bad "the relay did not log '$reason'" "$tmp/proxy-c1a.log"
    fi
  done
fi

# 5. The ssh launcher, against sshds started in two public namespaces with throwaway keys.
if selected ssh; then
  if ! command -v sshd >/dev/null && [ ! -x /usr/sbin/sshd ]; then
    echo "skip clusters: ssh (no sshd; apt-get install openssh-server)"
  else
    ssh-keygen -q -t ed25519 -N '' -f "$tmp/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$tmp/user_key"
    cp "$tmp/user_key.pub" "$tmp/authorized_keys"
    chmod 600 "$tmp/authorized_keys"
    mkdir -p /run/sshd
    cat >"$tmp/sshd_config" <<EOF
Port 2222
HostKey $tmp/host_key
AuthorizedKeysFile $tmp/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
StrictModes no
UsePAM no
PidFile none
EOF
    for ns in fy-p-n1 fy-p-n2; do
      ip netns exec $ns /usr/sbin/sshd -D -e -f "$tmp/sshd_config" 2>>"$tmp/sshd.log" &
      echo $! >>"$tmp/sshd-pids"
    done
    sleep 0.5
    printf '198.51.100.21 slots=2\n198.51.100.22 slots=2\n' >"$tmp/ssh-hosts"
    launcher="ssh -p 2222 -i $tmp/user_key -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR {host}"
    ip netns exec fy-p-n1 "$FERRY" run --hostfile "$tmp/ssh-hosts" --launcher "$launcher" --timeout 60 -n 4 "$tmp/coll_alltoall" >"$tmp/ssh.log" 2>&1
    rc=$?
    if [ $rc = 0 ]; then ok "coll_alltoall -n 4 over ssh to two hosts"; else bad "coll_alltoall -n 4 over ssh (exit $rc)" "$tmp/ssh.log"; fi
    t0=$(now_ns)
    ip netns exec fy-p-n1 "$FERRY" run --hostfile "$tmp/ssh-hosts" --launcher "$launcher" --timeout 60 -n 4 "$tmp/spin" >"$tmp/ssh-kill.log" 2>&1 &
    job_pid=$!
    for _ in $(seq 100); do [ "$(cat "$tmp/ssh-kill.log" 2>/dev/null | grep -c spinning)" -ge 4 ] && break; sleep 0.1; done
    kill -9 "$(pid_in fy-p-n2 "$tmp/spin")" 2>/dev/null
    { wait $job_pid; } 2>/dev/null
    expect_failure "a rank killed on an ssh host" "$tmp/ssh-kill.log" $? "$t0" "on 198.51.100.22) was killed by signal 9"
  fi
fi

echo "$passed passed, $failed failed"
[ $failed = 0 ]
