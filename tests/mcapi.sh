#!/usr/bin/env bash
# Builds the MCAPI test programs of tests/mcapi with bin/mcapicc and runs each with every node
# count of its `nodes:` line, in every launch mode of its `launch:` line (default: job):
#
#   /* nodes: 2 4 */
#   /* launch: job hand hosts */
#   /* killed: 1 */
#
#   job    under the launcher: `ferry run -n N --timeout T prog` (FERRY_RANK, FERRY_SIZE set
#          by it).
#   split  the same, on two emulated hosts: nodes 0 and 1 on one (FERRY_HOST_ID), 2 and 3 on
#          the other, ...: shared memory within each, TCP between them.
#   hydra  under MPICH's launcher through PMI-1: `mpiexec.mpich -n N` (FERRY_RANK and
#          FERRY_SIZE set from its PMI_RANK and PMI_SIZE); skipped when it is not installed.
#   hand   N copies started here, without a launcher, in random order with small delays, each
#          with FERRY_RANK=i FERRY_SIZE=N and FERRY_MCAPI_RENDEZVOUS=<a fresh directory> where
#          the nodes find each other.
#   hosts  the same, but with FERRY_MCAPI_HOSTS=<a fresh file>: a first line
#          `secret <64 hex digits>` (random) and one line `<node> 127.0.0.1:<port>` per node,
#          on free ports.
#
# In the hand and hosts modes every copy runs under timeout(1), so a straggler is killed at
# the time limit and none is left behind; the run passes when every node exits 0, except the
# nodes of the `killed:` line, which must die of SIGKILL. In every mode a passing run prints
# "ok <name>" on its standard output.
#
# Output: one line per case (`ok   name[mode] -n N (0.31 s)`, `FAIL ...` followed by the end
# of its output), then `N passed, M failed`. The exit status is non-zero when a case failed.

set -u

usage() {
    cat <<'EOF'
usage: tests/mcapi.sh [options] [FILTER...]

  FILTER             run only cases whose name contains one of these strings
                     (names: init[job], messages[hosts], peer_killed[hand], ...)
  -n, --nodes N      only the runs with N nodes
  --timeout SECONDS  limit for one run (default: 60)
  -v, --verbose      show the output of passing runs too
  -l, --list         list the cases and exit
  -h, --help         this text

environment:
  FERRY    Ferry's launcher (default: target/release/ferry), for the job mode
  MCAPICC  the compiler wrapper (default: bin/mcapicc)
  CFLAGS   extra compiler flags (default flags: -Wall -Wextra -O2)
EOF
}

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2

nodes_only=""
run_timeout=60
verbose=0
list_only=0
filters=()
while [ $# -gt 0 ]; do
    case "$1" in
        -n|--nodes) nodes_only=${2:-}; shift 2 || { usage >&2; exit 2; } ;;
        --nodes=*) nodes_only=${1#--nodes=}; shift ;;
        --timeout) run_timeout=${2:-}; shift 2 || { usage >&2; exit 2; } ;;
        --timeout=*) run_timeout=${1#--timeout=}; shift ;;
        -v|--verbose) verbose=1; shift ;;
        -l|--list) list_only=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; filters+=("$@"); break ;;
        -*) echo "mcapi.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) filters+=("$1"); shift ;;
    esac
done
case "$run_timeout" in
    ''|*[!0-9]*) echo "mcapi.sh: --timeout needs a whole number of seconds" >&2; exit 2 ;;
esac

FERRY=${FERRY:-target/release/ferry}
MCAPICC=${MCAPICC:-bin/mcapicc}
read -r -a extra_cflags <<< "${CFLAGS:-}"
work=build/tests/mcapi
mkdir -p "$work/log" || exit 2
# The programs' own watchdog fires a little before the runner's limit, with a message.
export FERRY_MCAPI_TEST_LIMIT=$((run_timeout > 10 ? run_timeout - 5 : run_timeout))

passed=0
failed=0

# `/* key: words */` of a source file, the words only.
header_line() {
    sed -n "s|^[[:space:]]*/\*[[:space:]]*$2:\([^*]*\)\*/.*|\1|p" "$1" | head -n 1
}

# shellcheck source=tests/runner-lib.sh
. "$repo/tests/runner-lib.sh"


# Free TCP ports on 127.0.0.1, one per line.
free_ports() {
    python3 - "$1" <<'PY'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])
PY
}

# run_job NAME N EXE LOG: under the launcher.
run_job() {
    local np=$2 exe=$3 log=$4 mode=${5:-job}
    local -a wrap=()
    if [ "$mode" = split ]; then
        wrap=(sh -c 'FERRY_HOST_ID=emulated-host-$((FERRY_RANK / 2)) exec "$0" "$@"')
    fi
    if [ "$mode" = hydra ]; then
        timeout -k 5 $((run_timeout + 30)) mpiexec.mpich -n "$np" \
            sh -c 'FERRY_RANK=$PMI_RANK FERRY_SIZE=$PMI_SIZE exec "$0" "$@"' "$exe" \
            > "$log.out" 2> "$log.err" < /dev/null
        return
    fi
    timeout -k 5 $((run_timeout + 30)) "$FERRY" run -n "$np" --timeout "$run_timeout" \
        "${wrap[@]}" "$exe" > "$log.out" 2> "$log.err" < /dev/null
}

# run_by_hand MODE N EXE LOG KILLED: N copies without a launcher; returns 0 when every node
# ended as it should, and leaves a reason in $why otherwise.
pids=()
kill_stragglers() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
}
trap 'kill_stragglers; exit 130' INT TERM

run_by_hand() {
    local mode=$1 np=$2 exe=$3 log=$4 killed=" $5 " i rc place dir
    local -a order rcs
    dir=$(mktemp -d "${TMPDIR:-/tmp}/ferry-mcapi.XXXXXX") || return 1
    local -a env_extra
    if [ "$mode" = hosts ]; then
        local -a ports
        mapfile -t ports < <(free_ports "$np")
        if [ ${#ports[@]} -ne "$np" ]; then
            why="could not find $np free ports (python3 needed)"
            rm -rf "$dir"
            return 1
        fi
        {
            echo "secret $(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
            for ((i = 0; i < np; i++)); do echo "$i 127.0.0.1:${ports[$i]}"; done
        } > "$dir/hosts"
        env_extra=("FERRY_MCAPI_HOSTS=$dir/hosts")
    else
        env_extra=("FERRY_MCAPI_RENDEZVOUS=$dir")
    fi
    mapfile -t order < <(seq 0 $((np - 1)) | shuf)
    pids=()
    : > "$log.out"
    : > "$log.err"
    for i in "${order[@]}"; do
        # Through sh, so that a node killed by a signal is an exit status (128 + signal) and
        # not a "Killed" notice from this shell.
        sh -c '"$@"; exit $?' sh env FERRY_RANK="$i" FERRY_SIZE="$np" "${env_extra[@]}" \
            timeout -k 5 "$run_timeout" "$exe" > "$log.$i.out" 2> "$log.$i.err" < /dev/null &
        pids[$i]=$!
        sleep "0.0$((RANDOM % 10))"
    done
    why=""
    for ((i = 0; i < np; i++)); do
        wait "${pids[$i]}"
        rcs[$i]=$?
    done
    pids=()
    for ((i = 0; i < np; i++)); do
        rc=${rcs[$i]}
        { sed "s/^/[node $i] /" "$log.$i.out"; } >> "$log.out"
        { sed "s/^/[node $i] /" "$log.$i.err"; } >> "$log.err"
        case "$killed" in *" $i "*) place=killed ;; *) place=normal ;; esac
        if [ "$rc" -eq 124 ]; then
            why="${why}node $i timed out; "
        elif [ "$place" = killed ] && [ "$rc" -ne 137 ]; then
            why="${why}node $i exited $rc, expected death by SIGKILL (137); "
        elif [ "$place" = normal ] && [ "$rc" -ne 0 ]; then
            why="${why}node $i exited $rc; "
        fi
    done
    rm -rf "$dir"
    [ -z "$why" ]
}

sources=()
for src in tests/mcapi/*.c; do
    [ -e "$src" ] && sources+=("$src")
done

if [ $list_only -eq 1 ]; then
    for src in "${sources[@]}"; do
        name=$(basename "$src" .c)
        line="$name: nodes $(echo $(header_line "$src" nodes)); launch"
        line="$line $(m=$(echo $(header_line "$src" launch)); echo "${m:-job}")"
        k=$(echo $(header_line "$src" killed))
        [ -n "$k" ] && line="$line; node $k killed"
        echo "$line"
    done
    exit 0
fi

missing=""
[ -x "$MCAPICC" ] || missing="$MCAPICC"
[ -e lib/libmcapi.so ] || missing="$missing${missing:+ and }lib/libmcapi.so"
if [ -n "$missing" ]; then
    echo "FAIL setup: $missing not found (build Ferry's MCAPI library first)"
    echo "0 passed, 1 failed"
    exit 1
fi

for src in "${sources[@]}"; do
    name=$(basename "$src" .c)
    nodes=$(header_line "$src" nodes)
    modes=$(header_line "$src" launch)
    [ -n "${modes// /}" ] || modes=job
    killed=$(echo $(header_line "$src" killed))
    any=0
    for mode in $modes; do selected "$name[$mode]" && any=1; done
    [ $any -eq 1 ] || continue
    if [ -z "${nodes// /}" ]; then
        echo "FAIL $name: no /* nodes: ... */ line in $src"
        failed=$((failed + 1))
        continue
    fi
    exe="$work/$name"
    if ! "$MCAPICC" -Wall -Wextra -O2 "${extra_cflags[@]}" -o "$exe" "$src" > "$exe.cc.log" 2>&1; then
        echo "FAIL $name: compilation failed"
        tail -n 20 "$exe.cc.log" | sed 's/^/    | /'
        failed=$((failed + 1))
        continue
    fi
    for mode in $modes; do
        label="$name[$mode]"
        selected "$label" || continue
        for np in $nodes; do
            [ -z "$nodes_only" ] || [ "$nodes_only" = "$np" ] || continue
            log="$work/log/$name.$mode.$np"
            rm -f "$log".*
            why=""
            t0=$(now_ns)
            if [ "$mode" = hydra ] && ! command -v mpiexec.mpich > /dev/null; then
                echo "skip $label -n $np: mpiexec.mpich is not installed"
                continue
            fi
            if [ "$mode" = job ] || [ "$mode" = split ] || [ "$mode" = hydra ]; then
                if [ -n "$killed" ]; then
                    echo "FAIL $label -n $np: a program with killed nodes runs only by hand"
                    failed=$((failed + 1))
                    continue
                fi
                if [ ! -x "$FERRY" ]; then
                    echo "FAIL $label -n $np: $FERRY not found (cargo build --release)"
                    failed=$((failed + 1))
                    continue
                fi
                run_job "$name" "$np" "$exe" "$log" "$mode"
                rc=$?
                [ $rc -eq 0 ] || why="exit status $rc"
            else
                run_by_hand "$mode" "$np" "$exe" "$log" "$killed" || true
            fi
            secs=$(awk -v a="$t0" -v b="$(now_ns)" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
            if [ -z "$why" ] && ! grep -q "ok $name" "$log.out"; then
                why="no \"ok $name\" line on standard output"
            fi
            if [ -z "$why" ]; then
                echo "ok   $label -n $np ($secs s)"
                passed=$((passed + 1))
                if [ $verbose -eq 1 ]; then show_tail "$log.out" stdout; show_tail "$log.err" stderr; fi
            else
                echo "FAIL $label -n $np ($secs s): $why"
                show_tail "$log.out" stdout
                show_tail "$log.err" stderr
                failed=$((failed + 1))
            fi
        done
    done
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
