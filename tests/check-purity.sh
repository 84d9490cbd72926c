#!/usr/bin/env bash
# The pure crates must not depend on sockets, threads-with-I/O or clocks (STYLE.md 16).
set -euo pipefail
cd "$(dirname "$0")/.."
fail=0
for crate in ferry-wire ferry-data ferry-coll ferry-model ferry-sim ferry-plot; do
  deps=$(cargo tree -p "$crate" -e normal --prefix none 2>/dev/null | awk '{print $1}' | sort -u)
  for bad in mio tokio polling socket2 libc nix rustix; do
    if echo "$deps" | grep -qx "$bad"; then
      echo "FAIL purity: $crate depends on $bad"
      fail=1
    fi
  done
done
[ $fail = 0 ] && echo "ok   purity: pure crates depend on no I/O crate"
exit $fail
