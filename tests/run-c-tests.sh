#!/usr/bin/env bash
# Builds and runs the C integration programs in tests/c against Ferry (or, with
# --mpi mpich, against Debian's MPICH to validate the programs themselves).
#
# Each program declares in its first lines the rank counts it runs with and,
# for the failure-path programs, what must happen:
#
#   /* ranks: 1 2 4 */
#   /* expect: fail exit=3 stderr="MPI_Abort" within=30 */
#
# Without an expect line a run must exit 0. With "expect: fail" it must exit
# non-zero, within `within` seconds (default 30; a hang that only the
# launcher's --timeout ends does not count), with exit status `exit` if given
# and with `stderr` (a fixed string, case-sensitive) somewhere in its stderr.
# A passing run may also name a string its stderr must hold:
#
#   /* expect: pass stderr="coll-stats: bcast" */
#
# In --mpi mpich mode only the non-zero exit and the time limit of a failure
# run are checked, and no stderr at all: the exit status and message text are
# Ferry's own. A program that MPICH itself cannot pass says so, and is skipped
# in that mode:
#
#   /* mpich: skip <reason> */
#
# Environment for the runs of a program (words of NAME=VALUE, no spaces in a
# value); with several `env:` lines the program runs once per line, each case
# named `NAME[first assignment] -n N`:
#
#   /* env: FERRY_STATUS_SOURCE=arrival FERRY_BCAST_ALGORITHM=status_binomial */
#
# A program may ask to run once per registered collective algorithm (as
# `ferry info` lists them) of the collectives it names, with that algorithm
# forced through FERRY_<COLL>_ALGORITHM and FERRY_COLL_STATS=1, each run
# passing only if its stderr shows the algorithm ran; cases are named
# `NAME[ALGORITHM] -n N` (a FILTER may name one algorithm). With --mpi mpich
# the program runs once per rank count as usual. The hierarchical algorithms
# (`*.hier`) are left out: they run only across hosts, and tests/shm.sh forces
# them there.
#
#   /* algorithms: bcast scatter gather */
#
# Two extra cases run when their tools exist, and say `skip` otherwise:
#   abi:NAME    NAME built by Debian's mpicc.mpich (MPICH's header and
#               library), run by `ferry run` with <repo>/lib first on
#               LD_LIBRARY_PATH and LD_BIND_NOW=1: binary compatibility with
#               MPICH.
#   hydra:NAME  NAME built by bin/mpicc, launched by Debian's Hydra
#               (/usr/bin/mpiexec.hydra): Ferry's PMI-1 client.
#
# Output: one line per case (`ok   name -n N (0.31 s)`, `FAIL ...` followed
# by the end of its output, `skip ...`), then `N passed, M failed`. The exit
# status is non-zero when any case failed.

set -u

usage() {
    cat <<'EOF'
usage: tests/run-c-tests.sh [options] [FILTER...]

  FILTER             run only cases whose name contains one of these strings
                     (names: p2p_basic, sizes, ..., abi:p2p_basic, hydra:sizes)
  --mpi ferry|mpich  implementation to build and run with (default: ferry)
                     mpich: mpicc.mpich and `timeout T mpiexec.mpich -n N`
  -n, --np N         only the runs with N ranks
  --timeout SECONDS  limit for one run (default: 60; a program may ask for more
                     with a /* timeout: N */ line)
  -v, --verbose      show the output of passing runs too
  -l, --list         list the cases and exit
  -h, --help         this text

environment:
  FERRY   Ferry's launcher (default: target/release/ferry)
  MPICC   Ferry's compiler wrapper (default: bin/mpicc)
  CFLAGS  extra compiler flags (default flags: -Wall -Wextra -O2)
EOF
}

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2

mode=ferry
np_only=""
run_timeout=60
verbose=0
list_only=0
filters=()

while [ $# -gt 0 ]; do
    case "$1" in
        --mpi) mode=${2:-}; shift 2 || { usage >&2; exit 2; } ;;
        --mpi=*) mode=${1#--mpi=}; shift ;;
        -n|--np) np_only=${2:-}; shift 2 || { usage >&2; exit 2; } ;;
        --np=*) np_only=${1#--np=}; shift ;;
        --timeout) run_timeout=${2:-}; shift 2 || { usage >&2; exit 2; } ;;
        --timeout=*) run_timeout=${1#--timeout=}; shift ;;
        -v|--verbose) verbose=1; shift ;;
        -l|--list) list_only=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; filters+=("$@"); break ;;
        -*) echo "run-c-tests: unknown option $1" >&2; usage >&2; exit 2 ;;
        *) filters+=("$1"); shift ;;
    esac
done

case "$mode" in
    ferry|mpich) ;;
    *) echo "run-c-tests: --mpi must be ferry or mpich, not '$mode'" >&2; exit 2 ;;
esac
case "$run_timeout" in
    ''|*[!0-9]*) echo "run-c-tests: --timeout needs a whole number of seconds" >&2; exit 2 ;;
esac
default_timeout=$run_timeout

FERRY=${FERRY:-target/release/ferry}
MPICC=${MPICC:-bin/mpicc}
MPICH_CC=mpicc.mpich
MPICH_RUN=mpiexec.mpich
HYDRA=/usr/bin/mpiexec.hydra
base_cflags=(-Wall -Wextra -O2)
read -r -a extra_cflags <<< "${CFLAGS:-}"

# Programs run under Debian's MPICH library in the abi case, and under Hydra
# in the hydra case, with their rank counts.
abi_cases=("p2p_basic 4" "datatypes 2" "probe 2" "errors 2" "coll_user_ops 3" "coll_alltoall 4" "rma_fence 4" "rma_passive 4"
           "large_count_p2p 4" "large_count_coll 4" "large_count_types 2" "large_count_big 2"
           "mpi1_names 2" "tools 2" "tools_events 2" "intercomm_from_groups 5" "float16 2" "real16 2"
           "io_files 2" "io_errors 2" "io_views 4")
hydra_cases=("p2p_basic 4" "sizes 2")

build_root=build/tests
work="$build_root/$mode"
mkdir -p "$work/bin" "$work/log" || exit 2

passed=0
failed=0

# shellcheck source=tests/runner-lib.sh
. "$repo/tests/runner-lib.sh"

np_selected() {
    [ -z "$np_only" ] || [ "$np_only" = "$1" ]
}

# The rank counts of a source file: the numbers of its `ranks:` line.
ranks_of() {
    sed -n 's|^[[:space:]]*/\*[[:space:]]*ranks:\([0-9 ]*\)\*/.*|\1|p' "$1" | head -n 1
}

# The expectation of a source file: "pass", or "fail" with exit/stderr/within.
exp_kind=pass exp_exit="" exp_stderr="" exp_within=30
parse_expect() {
    local line
    exp_kind=pass exp_exit="" exp_stderr="" exp_within=30
    line=$(grep -m 1 -E '^[[:space:]]*/\*[[:space:]]*expect:' "$1") || return 0
    line=${line#*expect:}
    line=${line%\*/*}
    case "$line" in
        *fail*) exp_kind=fail ;;
        *) exp_kind=pass ;;
    esac
    if [[ $line =~ exit=([0-9]+) ]]; then exp_exit=${BASH_REMATCH[1]}; fi
    if [[ $line =~ within=([0-9]+) ]]; then exp_within=${BASH_REMATCH[1]}; fi
    if [[ $line =~ stderr=\"([^\"]*)\" ]]; then exp_stderr=${BASH_REMATCH[1]}; fi
}

# The `env:` lines of a source file, one per line (NAME=VALUE assignments).
env_of() {
    sed -n 's|^[[:space:]]*/\*[[:space:]]*env:\(.*\)\*/.*|\1|p' "$1"
}

# The collectives of a source file's `algorithms:` line.
algorithms_of() {
    sed -n 's|^[[:space:]]*/\*[[:space:]]*algorithms:\([a-z_ ]*\)\*/.*|\1|p' "$1" | head -n 1
}

# Registered algorithm ids of collective $1, from `ferry info` (read once).
ferry_info=""
algorithm_ids() {
    if [ -z "$ferry_info" ]; then
        ferry_info=$("$FERRY" info) || return 1
    fi
    printf '%s\n' "$ferry_info" | awk -v c="$1." 'index($1, c) == 1 { print $1 }'
}

# with_env "NAME=VALUE ..." COMMAND...: runs COMMAND with those variables set.
with_env() {
    local assigns=$1 a
    shift
    (
        for a in $assigns; do export "${a?}"; done
        "$@"
    )
}

# The limit for one run of a source file: its `timeout:` line, never below --timeout.
timeout_of() {
    local t
    t=$(sed -n 's|^[[:space:]]*/\*[[:space:]]*timeout:[[:space:]]*\([0-9][0-9]*\)[[:space:]]*\*/.*|\1|p' "$1" | head -n 1)
    if [ -n "$t" ] && [ "$t" -gt "$default_timeout" ]; then echo "$t"; else echo "$default_timeout"; fi
}

# The reason given by a `mpich: skip` line, if any.
mpich_skip_reason() {
    sed -n 's|^[[:space:]]*/\*[[:space:]]*mpich:[[:space:]]*skip[[:space:]]*\(.*\)\*/.*|\1|p' "$1" |
        head -n 1 | sed 's/[[:space:]]*$//'
}


report_fail() {
    local what=$1 why=$2 log=$3
    echo "FAIL $what: $why"
    show_tail "$log.out" stdout
    show_tail "$log.err" stderr
    failed=$((failed + 1))
}

# run_case LABEL LOGNAME -- COMMAND...: runs COMMAND, judges it against the
# current expectation (exp_*), prints the result line.
run_case() {
    local label=$1 logname=$2
    shift 3
    local log="$work/log/$logname"
    local t0 t1 rc secs
    t0=$(now_ns)
    "$@" > "$log.out" 2> "$log.err" < /dev/null
    rc=$?
    t1=$(now_ns)
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
    # 124 is timeout(1)'s own status; 137 (SIGKILL) counts as a time-out only
    # when the limit was reached, as a rank killed by SIGKILL ends that way too.
    local timed_out=0
    if [ $rc -eq 124 ] ||
       awk -v s="$secs" -v t="$run_timeout" 'BEGIN { exit !(s >= t) }'; then
        timed_out=1
    fi

    if [ "$exp_kind" = pass ]; then
        if [ $rc -eq 0 ] && [ "$mode" = ferry ] && [ -n "$exp_stderr" ] &&
           ! grep -qF -- "$exp_stderr" "$log.err"; then
            report_fail "$label ($secs s)" "stderr lacks \"$exp_stderr\"" "$log"
        elif [ $rc -eq 0 ]; then
            echo "ok   $label ($secs s)"
            passed=$((passed + 1))
            if [ $verbose -eq 1 ]; then show_tail "$log.out" stdout; show_tail "$log.err" stderr; fi
        elif [ $timed_out -eq 1 ]; then
            report_fail "$label ($secs s)" "timed out" "$log"
        else
            report_fail "$label ($secs s)" "exit status $rc" "$log"
        fi
        return
    fi

    # Expected failure.
    local why=""
    if [ $rc -eq 0 ]; then
        why="exit status 0, expected a failing job"
    elif [ $timed_out -eq 1 ]; then
        why="timed out: the failure did not end the job"
    elif awk -v s="$secs" -v w="$exp_within" 'BEGIN { exit !(s > w) }'; then
        why="job took $secs s to fail, limit $exp_within s"
    elif [ "$mode" = ferry ] && [ -n "$exp_exit" ] && [ "$rc" -ne "$exp_exit" ]; then
        why="exit status $rc, expected $exp_exit"
    elif [ "$mode" = ferry ] && [ -n "$exp_stderr" ] && ! grep -qF -- "$exp_stderr" "$log.err"; then
        why="stderr lacks \"$exp_stderr\""
    fi
    if [ -z "$why" ]; then
        local note=""
        if [ "$mode" = mpich ]; then note=", message not checked"; fi
        echo "ok   $label ($secs s, failed as expected with status $rc$note)"
        passed=$((passed + 1))
        if [ $verbose -eq 1 ]; then show_tail "$log.out" stdout; show_tail "$log.err" stderr; fi
    else
        report_fail "$label ($secs s)" "$why" "$log"
    fi
}

# compile CC OUT SRC [FLAGS...]: prints FAIL and returns 1 on error; reports
# warnings without failing.
compile() {
    local cc=$1 out=$2 src=$3 name
    shift 3
    name=$(basename "$out")
    local log="$out.cc.log"
    if ! "$cc" "${base_cflags[@]}" "${extra_cflags[@]}" "$@" -o "$out" "$src" > "$log" 2>&1; then
        echo "FAIL $name: compilation with $cc failed"
        tail -n 20 "$log" | sed 's/^/    | /'
        failed=$((failed + 1))
        return 1
    fi
    if grep -q 'warning:' "$log"; then
        echo "warn $name: compiler warnings with $cc"
        grep 'warning:' "$log" | head -n 5 | sed 's/^/    | /'
    fi
    return 0
}

launch() {
    local np=$1
    shift
    if [ "$mode" = ferry ]; then
        timeout -k 5 $((run_timeout + 30)) "$FERRY" run -n "$np" --timeout "$run_timeout" "$@"
    else
        timeout -k 5 "$run_timeout" "$MPICH_RUN" -n "$np" "$@"
    fi
}

# LD_BIND_NOW: every MPI symbol the program refers to must exist in Ferry's library when
# it loads, not only those a run happens to call.
launch_with_ferry_lib() {
    local np=$1
    shift
    LD_BIND_NOW=1 LD_LIBRARY_PATH="$repo/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        timeout -k 5 $((run_timeout + 30)) "$FERRY" run -n "$np" --timeout "$run_timeout" "$@"
}

# ---- the programs -----------------------------------------------------------

sources=()
for src in tests/c/*.c; do
    [ -e "$src" ] && sources+=("$src")
done

if [ $list_only -eq 1 ]; then
    for src in "${sources[@]}"; do
        name=$(basename "$src" .c)
        parse_expect "$src"
        ranks=$(ranks_of "$src")
        ranks=$(echo $ranks)
        line="$name: ranks $ranks; expect $exp_kind"
        if [ "$exp_kind" = fail ]; then
            [ -n "$exp_exit" ] && line="$line exit=$exp_exit"
            [ -n "$exp_stderr" ] && line="$line stderr=\"$exp_stderr\""
            line="$line within=$exp_within"
        fi
        reason=$(mpich_skip_reason "$src")
        [ -n "$reason" ] && line="$line; skipped with --mpi mpich ($reason)"
        envs=$(env_of "$src" | sed 's/[[:space:]]*$//' | paste -sd '|' | sed 's/|/ | /g')
        [ -n "$envs" ] && line="$line; env $envs"
        algs=$(echo $(algorithms_of "$src"))
        [ -n "$algs" ] && line="$line; once per algorithm of $algs"
        echo "$line"
    done
    for c in "${abi_cases[@]}"; do set -- $c; echo "abi:$1: ranks $2"; done
    for c in "${hydra_cases[@]}"; do set -- $c; echo "hydra:$1: ranks $2"; done
    exit 0
fi

if [ "$mode" = ferry ]; then
    cc=$MPICC
    cflags=()
    missing=""
    [ -x "$MPICC" ] || command -v "$MPICC" > /dev/null 2>&1 || missing="$MPICC"
    [ -x "$FERRY" ] || command -v "$FERRY" > /dev/null 2>&1 || missing="$missing${missing:+ and }$FERRY"
    if [ -n "$missing" ]; then
        echo "FAIL setup: $missing not found (build Ferry first, or set MPICC / FERRY)"
        echo "0 passed, 1 failed"
        exit 1
    fi
else
    cc=$MPICH_CC
    # Lets the programs skip checks where this MPICH release is known to
    # deviate from the standard; each such place names the MPICH issue.
    cflags=(-DMPICH_DEVIATIONS)
    for tool in "$MPICH_CC" "$MPICH_RUN"; do
        if ! command -v "$tool" > /dev/null 2>&1; then
            echo "FAIL setup: $tool not found"
            echo "0 passed, 1 failed"
            exit 1
        fi
    done
fi

for src in "${sources[@]}"; do
    name=$(basename "$src" .c)
    # The cases of this program: "ENV|FORCED" for each env: line (or none)
    # and each forced algorithm ("VARIABLE=ALGORITHM", or none).
    env_lines=()
    while read -r e; do env_lines+=("$e"); done < <(env_of "$src")
    [ ${#env_lines[@]} -gt 0 ] || env_lines=("")
    forced=("")
    algs=$(algorithms_of "$src")
    if [ -n "${algs// /}" ] && [ "$mode" = ferry ]; then
        forced=()
        for coll in $algs; do
            ids=$(algorithm_ids "$coll")
            if [ -z "$ids" ]; then
                echo "FAIL $name: \`$FERRY info\` lists no algorithm of $coll"
                failed=$((failed + 1))
                continue
            fi
            var=FERRY_$(echo "$coll" | tr '[:lower:]' '[:upper:]')_ALGORITHM
            # The hierarchical algorithms apply only across hosts: tests/shm.sh forces
            # them on emulated ones.
            for id in $ids; do [ "${id##*.}" = hier ] || forced+=("$var=$id"); done
        done
    fi
    chosen=()
    labels=()
    for e in "${env_lines[@]}"; do
        for f in "${forced[@]}"; do
            label=$name
            if [ ${#env_lines[@]} -gt 1 ]; then set -- $e; label="$label[${1:-}]"; fi
            [ -n "$f" ] && label="$label[${f#*=}]"
            if selected "$label"; then
                chosen+=("$e|$f")
                labels+=("$label")
            fi
        done
    done
    [ ${#chosen[@]} -gt 0 ] || continue
    ranks=$(ranks_of "$src")
    if [ -z "${ranks// /}" ]; then
        echo "FAIL $name: no /* ranks: ... */ line in $src"
        failed=$((failed + 1))
        continue
    fi
    any=0
    for np in $ranks; do np_selected "$np" && any=1; done
    [ $any -eq 1 ] || continue
    if [ "$mode" = mpich ] && grep -qE '^[[:space:]]*/\*[[:space:]]*mpich:[[:space:]]*skip' "$src"; then
        echo "skip $name (MPICH: $(mpich_skip_reason "$src"))"
        continue
    fi
    exe="$work/bin/$name"
    compile "$cc" "$exe" "$src" "${cflags[@]}" || continue
    run_timeout=$(timeout_of "$src")
    for i in "${!chosen[@]}"; do
        parse_expect "$src"
        label=${labels[$i]}
        assigns=${chosen[$i]%%|*}
        f=${chosen[$i]#*|}
        if [ -n "$f" ]; then
            assigns="$assigns $f FERRY_COLL_STATS=1"
            # The statistics at finalize show the forced algorithm ran.
            exp_stderr=" ${f#*=} bytes="
        fi
        for np in $ranks; do
            np_selected "$np" || continue
            run_case "$label -n $np" "$label.$np" -- with_env "$assigns" launch "$np" "$exe"
        done
    done
done

# ---- binary compatibility: MPICH-built programs on Ferry's library ----------

exp_kind=pass exp_exit="" exp_stderr="" exp_within=30

for c in "${abi_cases[@]}"; do
    set -- $c
    name=$1 np=$2
    run_timeout=$(timeout_of "tests/c/$name.c")
    selected "abi:$name" || continue
    np_selected "$np" || continue
    if [ "$mode" != ferry ]; then
        echo "skip abi:$name (only meaningful with --mpi ferry)"
        continue
    fi
    if ! command -v "$MPICH_CC" > /dev/null 2>&1; then
        echo "skip abi:$name ($MPICH_CC not found)"
        continue
    fi
    mkdir -p "$build_root/abi"
    exe="$build_root/abi/$name"
    compile "$MPICH_CC" "$exe" "tests/c/$name.c" || continue
    # The point of the case is that Ferry's library is the one loaded.
    resolved=$(LD_LIBRARY_PATH="$repo/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$exe" 2>/dev/null |
               awk '/libmpi(ch)?\.so/ { print $3; exit }')
    case "$(readlink -f "$resolved" 2>/dev/null)" in
        "$repo"/lib/*) ;;
        *)
            echo "FAIL abi:$name -n $np: with LD_LIBRARY_PATH=$repo/lib the program loads '${resolved:-nothing}', not Ferry's libmpich.so.12"
            failed=$((failed + 1))
            continue ;;
    esac
    run_case "abi:$name -n $np" "abi.$name.$np" -- launch_with_ferry_lib "$np" "$exe"
done

# ---- Ferry programs under Hydra: the PMI-1 client ----------------------------

run_timeout=$default_timeout
for c in "${hydra_cases[@]}"; do
    set -- $c
    name=$1 np=$2
    selected "hydra:$name" || continue
    np_selected "$np" || continue
    if [ "$mode" != ferry ]; then
        echo "skip hydra:$name (only meaningful with --mpi ferry)"
        continue
    fi
    if [ ! -x "$HYDRA" ]; then
        echo "skip hydra:$name ($HYDRA not found)"
        continue
    fi
    exe="$work/bin/$name"
    if [ ! -x "$exe" ] || [ "tests/c/$name.c" -nt "$exe" ]; then
        compile "$cc" "$exe" "tests/c/$name.c" || continue
    fi
    run_case "hydra:$name -n $np" "hydra.$name.$np" -- \
        timeout -k 5 "$run_timeout" "$HYDRA" -n "$np" "$exe"
done

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
