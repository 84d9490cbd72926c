#!/usr/bin/env bash
# Ferry programs launched by Slurm: `srun --mpi=pmi2` starts C tests built with bin/mpicc on a
# throwaway one-node cluster (munged, slurmctld and slurmd on this machine, everything in a
# temporary directory), checks that every task joined one job of the size asked for, that the
# programs pass, and that a job whose rank calls MPI_Abort or is killed ends with a non-zero
# exit instead of hanging (a killed rank within 2 s, even without --kill-on-bad-exit). Every
# daemon is stopped and its state removed on any exit.
# Usage: tests/slurm.sh   (root; slurm-wlm and munge; prints `skip` where Slurm cannot run)
set -u
cd "$(dirname "$0")/.." || exit 2
repo=$PWD
start=$(date +%s.%N)

skip() { echo "skip slurm: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root (slurmd runs tasks as any user)"
for t in srun slurmctld slurmd munged sinfo scontrol; do
  command -v "$t" >/dev/null || skip "$t not found (apt-get install slurm-wlm munge)"
done
plugindir=$(dirname "$(find /usr/lib -name mpi_pmi2.so -path '*slurm*' 2>/dev/null | head -n 1)")
[ -f "$plugindir/mpi_pmi2.so" ] || skip "Slurm's pmi2 plugin (mpi_pmi2.so) is not installed"

work=$(mktemp -d /tmp/ferry-slurm.XXXXXX)
chmod 700 "$work"
daemons=()

# Processes that are not zombies, by pid, whose command line mentions $1 (but for this look).
live() { ps -eo pid=,stat=,comm=,args= | awk -v pat="$1" '$2 !~ /^Z/ && $3 != "ps" && $3 != "awk" && index($0, pat) { print $1 }'; }
stepd_before=$(live slurmstepd | tr '\n' ' ')

# Stop what this script started, in reverse order, and wait for each; slurmd takes its step
# daemons with it. Anything of ours still alive after that is named, killed and counted as a
# failure. Then the state goes.
cleanup() {
  local rc=$? pid i left=""
  for ((i = ${#daemons[@]} - 1; i >= 0; i--)); do
    pid=${daemons[i]}
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  for pid in $(live slurmstepd) $(live "$work/"); do
    case " $stepd_before " in *" $pid "*) continue ;; esac
    [ "$pid" = $$ ] && continue
    left="$left $pid"
    kill -KILL "$pid" 2>/dev/null
  done
  if [ -n "$left" ]; then
    echo "FAIL slurm: processes left behind (killed):$left"
    [ "$rc" = 0 ] && rc=1
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

fail=0 pass=0
ok() { echo "ok   slurm: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL slurm: $*"; fail=$((fail + 1)); }
die() { echo "FAIL slurm: $*"; for f in "$work"/*.log; do [ -s "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }; done; exit 1; }

# Free TCP ports for the controller and the node daemon.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ctld_port=$(free_port)
slurmd_port=$(free_port)
while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done
host=$(hostname -s)

mkdir -p "$work/state" "$work/spool" "$work/munge"
chmod 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
cat >"$work/slurm.conf" <<EOF
ClusterName=ferrytest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=2
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
PartitionName=ferry Nodes=$host Default=YES MaxTime=5 State=UP OverSubscribe=YES
EOF
export SLURM_CONF=$work/slurm.conf

munged -F --force --socket="$work/munge/socket" --key-file="$work/munge/munge.key" \
  --log-file="$work/munged.log" --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/seed" \
  </dev/null >/dev/null 2>&1 &
daemons+=($!)
for _ in $(seq 50); do [ -S "$work/munge/socket" ] && break; sleep 0.1; done
[ -S "$work/munge/socket" ] || die "munged did not start"

slurmctld -D -i </dev/null >"$work/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D -N "$host" </dev/null >"$work/slurmd.out" 2>&1 &
daemons+=($!)

idle=0
for _ in $(seq 150); do
  state=$(sinfo -h -n "$host" -o %t 2>/dev/null)
  case $state in idle) idle=1; break ;; esac
  sleep 0.1
done
[ $idle = 1 ] || die "the node did not become idle (state: ${state:-none})"
echo "slurm: one-node cluster up on $host ($(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }') s)"

[ -e lib/libmpi.so.12 ] || die "Ferry is not built (make build)"
mkdir -p "$work/bin"
for p in p2p_basic coll_allgather coll_reduce abort sigkill dead_peer; do
  bin/mpicc -O2 -Wall -o "$work/bin/$p" "tests/c/$p.c" || die "cannot compile tests/c/$p.c"
done

# run NAME N [SRUN-OPTIONS...]: srun the program on N tasks; sets rc, out and err files.
run() {
  local name=$1 n=$2
  shift 2
  out=$work/$name.$n.out err=$work/$name.$n.err
  FERRY_LOG=info timeout 40 srun --mpi=pmi2 -n "$n" --time=1 "$@" "$work/bin/$name" >"$out" 2>"$err"
  rc=$?
}

# Every task must have started as its own rank of one job of N (a task that failed to find
# the launcher would run alone as a singleton, and a test of one rank passes too easily).
joined() {
  local n=$1 r
  for ((r = 0; r < n; r++)); do
    grep -q "ferry\[rank $r\].*rank $r of $n listening" "$err" || return 1
  done
}

show() { for f in "$out" "$err"; do [ -s "$f" ] && tail -n 12 "$f" | sed 's/^/    | /'; done; }

# PMI itself first: every task puts a small value and one of the longest the client allows,
# reads its neighbour's back after the fence, and all agree on the job secret rank 0 made.
probe=target/release/examples/pmi_probe
[ -x "$probe" ] || cargo build --release -q -p ferry-core --example pmi_probe || die "cannot build $probe"
out=$work/probe.out err=$work/probe.err
timeout 40 srun --mpi=pmi2 -n 4 --time=1 "$probe" >"$out" 2>"$err"
rc=$?
digests=$(sed -n 's/.*pmi_probe: rank [0-3] of 4 .*value intact, secret digest \([0-9a-f]*\)$/\1/p' "$out" | sort | uniq -c | awk '{ print $1 }')
if [ $rc = 0 ] && [ "$digests" = 4 ]; then
  ok "pmi_probe -n 4: keys, the longest values and one job secret ($(grep -o '[0-9]*-byte value' "$out" | head -n 1))"
else
  bad "pmi_probe -n 4: exit $rc"; show
fi

for n in 1 2 4; do
  for p in p2p_basic coll_allgather coll_reduce; do
    t0=$(date +%s.%N)
    run "$p" "$n"
    secs=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
    if [ $rc = 0 ] && joined "$n" && ! grep -q FAIL "$err"; then
      ok "$p -n $n ($secs s)"
    else
      bad "$p -n $n: exit $rc ($secs s)"; show
    fi
  done
done

# Failure paths: within the time limit, with a non-zero exit, and no task left running.
# MPI_Abort reaches Slurm through PMI, which kills the step (exit 137: SIGKILL). A task killed
# by a signal ends the step through Slurm's --kill-on-bad-exit here, and without it below.
failure() {
  local p=$1 n=$2 label=$3 t0 secs
  shift 3
  t0=$(date +%s.%N)
  run "$p" "$n" "$@"
  secs=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
  if [ $rc != 0 ] && [ $rc != 124 ] && awk -v s="$secs" 'BEGIN { exit !(s < 30) }' && joined "$n" &&
    { [ "$p" != abort ] || grep -q "MPI_Abort" "$err"; }; then
    ok "$p -n $n$label fails with exit $rc ($secs s)"
  else
    bad "$p -n $n$label: exit $rc after $secs s (wanted non-zero, promptly)"; show
  fi
}
for n in 2 4; do
  failure abort "$n" ""
  failure sigkill "$n" " --kill-on-bad-exit" --kill-on-bad-exit=1
done
# A killed task noticed by Ferry's engine itself: without --kill-on-bad-exit Slurm lets the
# step run on, so a survivor's abort through PMI is what ends it. Each case must end within
# 2 s of the kill (rank 1 writes the time it kills itself into a file), naming rank 1.
for c in recv any irecv allreduce barrier lock flush lockloop "any FERRY_TRANSPORTS=tcp"; do
  w=${c%% *}
  label="dead_peer $w${c#"$w"}"
  out=$work/dead_peer.out err=$work/dead_peer.err
  # shellcheck disable=SC2086 # words of NAME=VALUE
  assigns="DEAD_PEER_WAIT=$c"
  # A timing over the limit is taken again once (as tests/dead-peer.sh does): a loaded machine
  # can stall srun's own teardown for a moment, so only a second run over the limit fails.
  first=""
  for attempt in 1 2; do
    rm -f "$work/stamp"
    ( export $assigns DEAD_PEER_STAMP="$work/stamp"; timeout 40 srun --mpi=pmi2 -n 3 --time=1 "$work/bin/dead_peer" >"$out" 2>"$err" )
    rc=$?
    end=$(date +%s.%N)
    killed=$(cat "$work/stamp" 2>/dev/null)
    secs=$(awk -v a="$end" -v b="${killed:-0}" 'BEGIN { printf "%.2f", a - b }')
    late=$(awk -v s="$secs" 'BEGIN { print (s >= 2) }')
    [ -n "$killed" ] && [ $rc != 0 ] && [ $rc != 124 ] && [ "$late" = 1 ] && [ $attempt = 1 ] || break
    first=" (the first run took $secs s)"
  done
  if [ -n "$killed" ] && [ $rc != 0 ] && [ $rc != 124 ] && [ "$late" = 0 ] &&
    grep -v '^dead_peer: ' "$err" | grep -q 'rank 1 '; then
    ok "$label -n 3 ends $secs s after the kill, exit $rc$first"
  else
    bad "$label -n 3: exit $rc, $secs s after the kill (wanted non-zero within 2 s, naming rank 1)$first"; show
  fi
done
if [ -n "$(live "$work/bin/")" ]; then
  bad "tasks left running after their steps ended: $(live "$work/bin/" | tr '\n' ' ')"
fi

total=$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }')
echo "$pass passed, $fail failed ($total s)"
[ $fail = 0 ]
