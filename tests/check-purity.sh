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
# The sans-IO core of the engine lives inside ferry-core, beside the drivers: its files (and
# the path choice across clusters, and the relay's frames, handshakes and decisions) may
# reach no socket, ring, clock, thread, file or log.
core="crates/ferry-core/src/engine/protocol.rs crates/ferry-core/src/engine/matching.rs
      crates/ferry-core/src/engine/request.rs crates/ferry-core/src/engine/slab.rs crates/ferry-core/src/engine/protocol/departed.rs
      crates/ferry-core/src/transport/frame.rs crates/ferry-core/src/transport/paths.rs crates/ferry-core/src/transport/tcp/bridge.rs
      crates/ferry-core/src/transport/relay/wire.rs crates/ferry-core/src/transport/relay/handshake.rs
      crates/ferry-core/src/transport/relay/policy.rs crates/ferry-core/src/transport/relay/registry.rs"
bad=$(grep -nE 'mio::|libc::|std::(net|time|thread|fs|process|io)|Instant|SystemTime|transport::(shm|tcp)|crate::(bootstrap|config|log)|(debug|info|warn|error)!|println!|eprintln!' $core || true)
if [ -n "$bad" ]; then
  echo "FAIL purity: the protocol core reaches I/O:"
  echo "$bad"
  fail=1
fi
# So does the MCAPI node core (and its frame codec) inside ferry-mcapi: no engine, no driver
# (of ferry-core only the hash map of small keys, which is plain code).
mcapi=$(ls crates/ferry-mcapi/src/core/*.rs crates/ferry-mcapi/src/wire.rs | grep -v '/tests.rs$')
bad=$(grep -nE 'mio::|libc::|std::(net|time|thread|fs|process|io)|Instant|SystemTime|ferry_core::([^f]|f[^a])|ferry_core::\{|crate::(driver|api)|(debug|info|warn|error)!|println!|eprintln!' $mcapi || true)
if [ -n "$bad" ]; then
  echo "FAIL purity: the MCAPI node core reaches I/O:"
  echo "$bad"
  fail=1
fi
[ $fail = 0 ] && echo "ok   purity: pure crates depend on no I/O crate; the protocol core and the MCAPI node core do no I/O"
exit $fail
