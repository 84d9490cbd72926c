#!/usr/bin/env bash
# A rank killed with SIGKILL while the others wait for it (tests/c/dead_peer.c: a receive from
# it or from any source, a wait on a non-blocking receive, an allreduce on the shared segment
# and as messages, a barrier, a window lock it holds, a flush of a get from it, locks and puts
# on its shared window that never wait), under each launcher that can run here:
#   ferry    ferry run (which sees the death itself)
#   hydra    MPICH's Hydra (/usr/bin/mpiexec.hydra), which stops the job on a bad exit itself
#            (even with -disable-auto-cleanup), often before a survivor's report gets out
#   ferry-blind, hydra-blind  the same launchers, each rank started by a shell that goes on
#            (`sh -c 'PROGRAM; exec sleep 30'`): the launcher sees no death, so nothing but
#            Ferry's engine notices it, and a survivor's abort is what ends the job
# Each case must end non-zero within LIMIT seconds (default 2) of the kill, measured from the
# time rank 1 writes into a file as it kills itself to the launcher's exit, with rank 1 named
# on stderr (under plain Hydra, whose own report names a pid, by Ferry's engine when it is
# first). A case over the limit runs once more, and fails only if that run is over it too.
# Slurm's cases are in tests/slurm.sh (they need its throwaway cluster).
# Usage: tests/dead-peer.sh [FILTER...]   (FILTER matches "launcher:case"; needs `make build`)
set -u
cd "$(dirname "$0")/.." || exit 2
FERRY=${FERRY:-target/release/ferry}
HYDRA=${HYDRA:-/usr/bin/mpiexec.hydra}
LIMIT=${LIMIT:-2}
[ -e lib/libmpi.so.12 ] || { echo "FAIL dead-peer: Ferry is not built (make build)"; exit 1; }
work=$(mktemp -d /tmp/ferry-dead-peer.XXXXXX)
trap 'rm -rf "$work"' EXIT
bin/mpicc -O2 -Wall -o "$work/dead_peer" tests/c/dead_peer.c || { echo "FAIL dead-peer: cannot compile tests/c/dead_peer.c"; exit 1; }

# case name -> environment of the run
cases=(
  "recv|DEAD_PEER_WAIT=recv"
  "any|DEAD_PEER_WAIT=any"
  "irecv|DEAD_PEER_WAIT=irecv"
  "allreduce-shm|DEAD_PEER_WAIT=allreduce FERRY_ALLREDUCE_ALGORITHM=shm"
  "allreduce-msg|DEAD_PEER_WAIT=allreduce FERRY_ALLREDUCE_ALGORITHM=recursive_doubling"
  "barrier|DEAD_PEER_WAIT=barrier"
  "lock|DEAD_PEER_WAIT=lock"
  "flush|DEAD_PEER_WAIT=flush"
  "lockloop|DEAD_PEER_WAIT=lockloop"
  "any-tcp|DEAD_PEER_WAIT=any FERRY_TRANSPORTS=tcp"
)
launchers=(ferry hydra ferry-blind hydra-blind)

selected() {
  [ $# -gt 1 ] || return 0
  local name=$1 f
  shift
  for f in "$@"; do [[ $name == *"$f"* ]] && return 0; done
  return 1
}

launch() {
  case $1 in
    ferry) "$FERRY" run -n 3 --timeout 20 "$work/dead_peer" ;;
    hydra) timeout -k 2 20 "$HYDRA" -n 3 "$work/dead_peer" ;;
    ferry-blind) "$FERRY" run -n 3 --timeout 20 sh -c "$work/dead_peer; exec sleep 30" ;;
    hydra-blind) timeout -k 2 20 "$HYDRA" -n 3 sh -c "$work/dead_peer; exec sleep 30" ;;
  esac
}

# Runs one case; sets err, rc, secs and why (empty when the timing and exit status are right).
run_case() {
  local l=$1 assigns=$2 end killed
  err=$work/$l.$name.err
  rm -f "$work/stamp"
  # shellcheck disable=SC2086 # words of NAME=VALUE
  ( export $assigns DEAD_PEER_STAMP="$work/stamp"; launch "$l" ) >/dev/null 2>"$err"
  rc=$?
  end=$(date +%s.%N)
  killed=$(cat "$work/stamp" 2>/dev/null)
  why=""
  if [ -z "$killed" ]; then
    why="rank 1 never reached its kill (no $work/stamp)"
  elif [ $rc = 0 ]; then
    why="exit status 0 (wanted a failure)"
  fi
  secs=$(awk -v a="$end" -v b="${killed:-$end}" 'BEGIN { printf "%.2f", a - b }')
  if [ -z "$why" ] && awk -v s="$secs" -v l="$LIMIT" 'BEGIN { exit !(s > l) }'; then
    why="the job ended $secs s after the kill (limit $LIMIT s)"
  fi
}

pass=0 fail=0 skip=0
for l in "${launchers[@]}"; do
  if [[ $l == hydra* ]] && [ ! -x "$HYDRA" ]; then
    echo "skip dead-peer: $l ($HYDRA not found)"
    skip=$((skip + 1))
    continue
  fi
  for c in "${cases[@]}"; do
    name=${c%%|*} assigns=${c#*|}
    label="$l:$name"
    selected "$label" "$@" || continue
    # A timing over the limit is taken again once: a shared machine can stall any process for a
    # moment, so only a second run over the limit fails the case.
    first=""
    for attempt in 1 2; do
      run_case "$l" "$assigns"
      [ -n "$why" ] || break
      [[ $why == "the job ended "* ]] && [ $attempt = 1 ] || break
      first=" (the first run took $secs s)"
    done
    named=$(grep -v '^dead_peer: ' "$err" | grep -c 'rank 1\b')
    if [ -z "$why" ] && [ "$named" = 0 ] && [ "$l" != hydra ]; then
      why="no message names rank 1"
    fi
    if [ -z "$why" ]; then
      note=""
      [ "$named" = 0 ] && note=", named by Hydra's own report only"
      echo "ok   dead-peer: $label ended $secs s after the kill, exit $rc$note$first"
      pass=$((pass + 1))
    else
      echo "FAIL dead-peer: $label: $why$first"
      sed 's/^/    | /' "$err" | tail -n 12
      fail=$((fail + 1))
    fi
  done
done
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
