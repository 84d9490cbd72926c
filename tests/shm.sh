#!/usr/bin/env bash
# Shared memory, mixed jobs and asynchronous progress, end to end under `ferry run`:
#
#   stress         100,000 checked messages among 4 ranks (tests/shm/stress.c) over shared
#                  memory, over TCP, in a mixed job (two emulated hosts of two ranks, so
#                  pairs on a "host" share memory and the others use TCP), with the
#                  single copy instead of the pipelined one, with rings so small that
#                  every frame goes in pieces, and with a progress thread
#   async          a rendezvous moves while no rank is inside MPI with FERRY_ASYNC_PROGRESS=1,
#                  and does not without it (tests/shm/async_progress.c), on each route
#   oversubscribed 8 ranks on this host's cores: 7 of them waiting a second in MPI_Recv use
#                  (almost) no CPU, then a token goes 10,000 times around the ring
#                  (tests/shm/ring_rounds.c), shm and TCP
#   collectives    the shared-memory collectives (tests/c/coll_shm.c, coll_shm_blocks.c) in a
#                  mixed job, where only communicators within an emulated host use them; 8
#                  ranks on this host's cores: 7 waiting a second in MPI_Barrier, then in
#                  MPI_Scatter, use (almost) no CPU, then small collectives round after round
#                  (tests/shm/coll_rounds.c); coll_shm.c across emulated hosts
#                  (FERRY_HOST_ID per rank) runs the hierarchical collectives, by the table
#                  and forced, on 2 and 3 hosts
#   leftovers      no segment stays in /dev/shm after a normal end, MPI_Abort, a SIGKILL
#                  of a rank (also one in the middle of shared-memory collectives), and the launcher removes one left by a job that died early
#
# Prints one line per check and "N passed, M failed"; exits non-zero on any failure.

set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2
FERRY=${FERRY:-target/release/ferry}
MPICC=${MPICC:-bin/mpicc}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

passed=0
failed=0
ok() { echo "ok   shm: $1"; passed=$((passed + 1)); }
bad() { echo "FAIL shm: $1"; failed=$((failed + 1)); }

for p in stress async_progress ring_rounds coll_rounds; do
    "$MPICC" -O2 -Wall -Wextra -Werror -o "$out/$p" "tests/shm/$p.c" || { echo "cannot build tests/shm/$p.c"; exit 1; }
done
"$MPICC" -O2 -o "$out/abort" tests/c/abort.c && "$MPICC" -O2 -o "$out/sigkill" tests/c/sigkill.c || exit 1
for p in coll_shm coll_shm_blocks coll_shm_sigkill coll_shm_gather_sigkill coll_algorithms; do
    "$MPICC" -O2 -o "$out/$p" "tests/c/$p.c" || exit 1
done

# Two emulated hosts: ranks 0-1 on one, 2-3 on the other.
cat > "$out/two-hosts" <<'EOF'
#!/bin/sh
FERRY_HOST_ID=emulated-host-$((PMI_RANK / 2)) exec "$@"
EOF
chmod +x "$out/two-hosts"
# Three, round-robin (each host's ranks not adjacent), and two uneven ones (rank 0 alone).
cat > "$out/three-hosts" <<'EOF'
#!/bin/sh
FERRY_HOST_ID=emulated-host-$((PMI_RANK % 3)) exec "$@"
EOF
cat > "$out/uneven-hosts" <<'EOF'
#!/bin/sh
FERRY_HOST_ID=emulated-host-$((PMI_RANK > 0)) exec "$@"
EOF
chmod +x "$out/three-hosts" "$out/uneven-hosts"

segments() { ls /dev/shm 2>/dev/null | grep -c '^ferry-' || true; }
before=$(segments)

run() { # name, env assignments..., -- , command...
    local name=$1; shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    if env "${envs[@]}" timeout 120 "$FERRY" run "$@" >"$out/log" 2>&1; then
        ok "$name: $(tail -n 1 "$out/log")"
    else
        bad "$name (exit $?):"; sed 's/^/     /' "$out/log" | tail -n 15
    fi
}

run "stress over shared memory" FERRY_TRANSPORTS=shm,tcp -- -n 4 "$out/stress"
run "stress over TCP" FERRY_TRANSPORTS=tcp -- -n 4 "$out/stress"
run "stress in a mixed job (2 hosts x 2 ranks)" FERRY_TRANSPORTS=shm,tcp -- -n 4 "$out/two-hosts" "$out/stress"
run "stress with the single copy" FERRY_SHM_SINGLE_COPY=1 -- -n 4 "$out/stress"
run "stress with a progress thread" FERRY_ASYNC_PROGRESS=1 -- -n 4 "$out/stress"
run "stress with tiny rings (every frame in pieces)" FERRY_SHM_RING_SIZE=4096 FERRY_SHM_EAGER_LIMIT=65536 -- -n 4 "$out/stress" 5000

for route in "FERRY_TRANSPORTS=shm,tcp" "FERRY_TRANSPORTS=tcp" "FERRY_SHM_SINGLE_COPY=1"; do
    run "async progress moves a rendezvous ($route)" "$route" FERRY_ASYNC_PROGRESS=1 -- -n 2 "$out/async_progress" expect
    run "no progress outside MPI without it ($route)" "$route" FERRY_ASYNC_PROGRESS=0 -- -n 2 "$out/async_progress" none
done

run "8 ranks on $(nproc) cores, shared memory" FERRY_TRANSPORTS=shm,tcp -- -n 8 "$out/ring_rounds"
run "8 ranks on $(nproc) cores, TCP" FERRY_TRANSPORTS=tcp -- -n 8 "$out/ring_rounds"

run "shared-memory collectives in a mixed job (2 hosts x 2 ranks)" FERRY_TRANSPORTS=shm,tcp -- -n 4 "$out/two-hosts" "$out/coll_shm"
run "shared-memory gather, scatter, alltoall in a mixed job (2 hosts x 2 ranks)" FERRY_TRANSPORTS=shm,tcp -- -n 4 "$out/two-hosts" "$out/coll_shm_blocks"
hier="FERRY_BCAST_ALGORITHM=hier FERRY_ALLREDUCE_ALGORITHM=hier"
run "hierarchical collectives, table's choice (3 hosts x 2 ranks, round-robin)" FERRY_TRANSPORTS=shm,tcp -- -n 6 "$out/three-hosts" "$out/coll_shm"
run "hierarchical collectives forced (2 hosts x 2 ranks)" FERRY_TRANSPORTS=shm,tcp $hier -- -n 4 "$out/two-hosts" "$out/coll_shm"
run "hierarchical collectives forced (3 hosts x 2 ranks, round-robin)" FERRY_TRANSPORTS=shm,tcp $hier -- -n 6 "$out/three-hosts" "$out/coll_shm"
run "hierarchical collectives forced (hosts of 1 and 4 ranks)" FERRY_TRANSPORTS=shm,tcp $hier -- -n 5 "$out/uneven-hosts" "$out/coll_shm"
run "every collective, hierarchical ones forced (3 hosts x 2 ranks, round-robin)" FERRY_TRANSPORTS=shm,tcp $hier -- -n 6 "$out/three-hosts" "$out/coll_algorithms"
run "every collective, hierarchical ones forced (hosts of 1 and 4 ranks)" FERRY_TRANSPORTS=shm,tcp $hier -- -n 5 "$out/uneven-hosts" "$out/coll_algorithms"
run "8 ranks on $(nproc) cores, shared-memory collectives" FERRY_TRANSPORTS=shm,tcp -- -n 8 "$out/coll_rounds"

# Leftovers: the checks above ended normally; now an abort and SIGKILLs.
timeout 60 "$FERRY" run -n 4 "$out/abort" >/dev/null 2>&1
timeout 60 "$FERRY" run -n 4 "$out/sigkill" >/dev/null 2>&1
timeout 60 "$FERRY" run -n 4 "$out/coll_shm_sigkill" >/dev/null 2>&1
timeout 60 "$FERRY" run -n 4 "$out/coll_shm_gather_sigkill" >/dev/null 2>&1
after=$(segments)
if [ "$after" -le "$before" ]; then
    ok "no segment left in /dev/shm after normal ends, MPI_Abort and SIGKILLs"
else
    bad "segments left in /dev/shm: $(ls /dev/shm | grep '^ferry-' | tr '\n' ' ')"
fi
# A job that died before its ranks had all mapped the segment leaves the name behind: the
# launcher removes what carries its job's name when the job ends.
"$FERRY" run -n 1 sleep 1 >/dev/null 2>&1 &
launcher=$!
sleep 0.3
stale=/dev/shm/ferry-kvs_${launcher}_0-0000000000000000
: > "$stale"
wait "$launcher"
if [ -e "$stale" ]; then
    rm -f "$stale"
    bad "the launcher left $stale"
else
    ok "the launcher removes its job's segments at the end"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
