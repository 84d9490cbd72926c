#!/bin/sh
# Debian's MPICH-built packages run unchanged on Ferry's library: NetPIPE's NPmpich2
# (netpipe-mpich2), linked against libmpich.so.12, on 2 ranks under `ferry run` with Ferry's
# lib/ first on LD_LIBRARY_PATH and LD_BIND_NOW=1, so a symbol Ferry lacks fails at start.
# Ferry's collective statistics on stderr prove that its library, not MPICH's, ran.
# Skips, with a message, without NPmpich2.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
NP=${NPMPICH2:-/usr/bin/NPmpich2}
if [ ! -x "$NP" ]; then
    echo "skip abi-packages: no $NP (Debian's netpipe-mpich2)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
say_fail() {
    echo "FAIL abi-packages: $1"
    [ -f "$2" ] && sed 's/^/    | /' "$2" | tail -n 15
    fail=1
}

resolved=$(LD_LIBRARY_PATH="$root/lib" ldd "$NP" | sed -n 's/^[[:space:]]*libmpich\.so\.12 => \([^ ]*\).*/\1/p')
case "$resolved" in
    "$root/lib/"*) echo "ok   abi-packages: NPmpich2's libmpich.so.12 resolves to Ferry's ($resolved)" ;;
    *) echo "FAIL abi-packages: NPmpich2's libmpich.so.12 resolves to '$resolved', not to $root/lib"; fail=1 ;;
esac

# Sizes up to 256 KiB cover the eager and rendezvous paths in a few seconds.
if (cd "$tmp" && LD_LIBRARY_PATH="$root/lib" LD_BIND_NOW=1 FERRY_COLL_STATS=1 \
        "$root/target/release/ferry" run -n 2 --timeout 120 "$NP" -u 262144 -o np.out) \
        >"$tmp/log" 2>&1; then
    rows=$(awk 'NF == 3 && $1 > 0 && $2 > 0 && $3 > 0' "$tmp/np.out" | wc -l)
    if ! grep -q "coll-stats: barrier" "$tmp/log"; then
        say_fail "NPmpich2 ran, but not on Ferry's library (no coll-stats line)" "$tmp/log"
    elif [ "$rows" -lt 60 ]; then
        say_fail "NPmpich2 wrote $rows valid result rows, expected at least 60" "$tmp/np.out"
    else
        last=$(tail -n 1 "$tmp/np.out" | awk '{printf "%d bytes at %.0f Mbps", $1, $2}')
        echo "ok   abi-packages: NPmpich2 -n 2 with LD_BIND_NOW=1 on Ferry's library: $rows sizes, last $last"
    fi
else
    say_fail "NPmpich2 -n 2 exited non-zero" "$tmp/log"
fi
exit $fail
