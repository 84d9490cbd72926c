#!/usr/bin/env bash
# The ladder inside crates/ferry-mpi (DESIGN.md "Inside the MPI face", STYLE.md 18, and
# docs/mpi-face.md), bottom to top:
#   base       the ABI's values and errors, the checks of C arguments
#   objects/   the runtime state, handle tables and records, which use base
#   services   modules that several features build on (request completion, reductions,
#              infos, error handlers, internal traffic, the progress thread, ...)
#   features   everything else: one module per feature; a feature never imports another
#   lifecycle  MPI_Init/Finalize and the first and last session: it hands the features'
#              hooks to the objects, so it is the one module above them all
#   boundary   the panic boundary
#   exports/   the C functions
# A module may import only modules of its own layer or below; lifecycle and boundary are for
# the exports only. A module is a top-level file or directory of src/: coll/ is one module,
# lifecycle.rs another, and a file with a directory beside it (p2p.rs and p2p/) one too. This
# prints every import circle between modules (a strongly connected component of more than
# one module) with the imports that close it, every import of one feature by another, and
# every import up the ladder.
#   tests/check-mpi-layers.sh           report, exit 0
#   tests/check-mpi-layers.sh --strict  exit 1 on a circle, an import of a feature by another
#                                       or an import up the ladder (make test runs this)
#   tests/check-mpi-layers.sh --ratchet exit 1 when an import goes up the ladder, or the circle
#                                       or the feature imports grow past MAX_CIRCLE and
#                                       MAX_FEATURE_IMPORTS below
set -euo pipefail
cd "$(dirname "$0")/.."
mode=report
case "${1:-}" in
  --strict) mode=strict ;;
  --ratchet) mode=ratchet ;;
  "") ;;
  *) echo "usage: $0 [--strict | --ratchet]" >&2; exit 2 ;;
esac
MODE=$mode SRC=crates/ferry-mpi/src python3 - <<'PY'
import os, re, sys

# The layers, bottom to top. A module not named here is a feature.
LAYERS = {
    "consts": "base",            # values of the ABI
    "predefined": "base",
    "error": "base",             # MpiError, die, C arguments (output, arrays, strings)
    "abi_objects": "base",       # data symbols of the ABI
    "objects": "objects",        # runtime state, handle tables, the records behind handles
    "completion": "service",     # the Wait/Test family: every request completes here
    "generalized": "service",    # generalized requests, callbacks that re-enter MPI
    "op": "service",             # reduction operations, user functions
    "op_queries": "service",     # what a user's reduction function may ask while it runs
    "info": "service",           # info objects, the hints of every call
    "errhandler": "service",     # error handlers, user error classes
    "internal": "service",       # a communicator's internal traffic, context agreement
    "progress": "service",       # the asynchronous progress thread
    "tools": "service",          # MPI_T: the events features raise, the counters they keep
    "typed_buffer": "service",   # a (buffer, count, datatype) as the bytes the engine moves
    "lifecycle": "lifecycle",    # MPI_Init/Finalize, sessions' start: fills the hooks
    "boundary": "boundary",      # the panic boundary, used by the exports only
    "exports": "exports",        # the C functions, one file per chapter of the standard
}
# The objects are data with MPI's values and error classes in them: base lies under them.
RANK = {"base": 0, "objects": 1, "service": 2, "feature": 3, "lifecycle": 4, "boundary": 5, "exports": 6}

# For --ratchet (make test runs --strict, which allows neither): they never go up.
MAX_CIRCLE = 0
MAX_FEATURE_IMPORTS = 0

src = os.environ["SRC"]
mode = os.environ["MODE"]
strict = mode == "strict"

def layer(m):
    return LAYERS.get(m, "feature")

def module_of(rel):
    """The top-level module of a path relative to src/ (None for lib.rs)."""
    parts = rel.split("/")
    if len(parts) == 1:
        return None if parts[0] == "lib.rs" else parts[0][:-3]
    return parts[0]

def parent_path(rel):
    """The module path (list of names, from the crate root) of `super` in this file."""
    parts = rel[:-3].split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    return parts[:-1]  # the file's own module path minus its last name

def code_lines(text):
    """The lines of a file without comments and without `#[cfg(test)]` modules."""
    out, skip, depth = [], False, 0
    pending_test = False
    for line in text.split("\n"):
        stripped = line.strip()
        if skip:
            depth += line.count("{") - line.count("}")
            out.append("")
            if depth <= 0:
                skip = False
            continue
        if stripped.startswith("#[cfg(test)]"):
            pending_test = True
            out.append("")
            continue
        if pending_test and re.match(r"(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", stripped):
            depth = line.count("{") - line.count("}")
            skip = depth > 0
            pending_test = False
            out.append("")
            continue
        pending_test = False
        line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
        line = re.sub(r"//.*", "", line)
        out.append(line)
    return out

edges = {}  # (from, to) -> [file:line]
mods = set()
for root, _, files in os.walk(src):
    for f in sorted(files):
        if not f.endswith(".rs"):
            continue
        path = os.path.join(root, f)
        rel = os.path.relpath(path, src)
        me = module_of(rel)
        if me is None:
            continue
        mods.add(me)
        sup = parent_path(rel)
        with open(path) as fh:
            lines = code_lines(fh.read())
        for n, line in enumerate(lines, 1):
            targets = []
            # crate::x and crate::{x, y::z}
            for m in re.finditer(r"\bcrate::(\{|[A-Za-z_]\w*)", line):
                if m.group(1) == "{":
                    body, depth, i = "", 1, m.end()
                    while i < len(line) and depth:
                        c = line[i]
                        depth += (c == "{") - (c == "}")
                        body += c
                        i += 1
                    d = 0; item = ""
                    for c in body + ",":
                        if c == "{": d += 1
                        if c == "}": d -= 1
                        if c == "," and d == 0:
                            name = re.match(r"\s*([A-Za-z_]\w*)", item)
                            if name: targets.append(name.group(1))
                            item = ""
                        else:
                            item += c
                else:
                    targets.append(m.group(1))
            # super::x (and super::super::x) resolved from this file's place
            for m in re.finditer(r"\b((?:super::)+)(\{|[A-Za-z_]\w*)", line):
                ups = m.group(1).count("super::")
                base = sup[: len(sup) - (ups - 1)] if ups > 1 else sup
                if base:
                    targets.append(base[0])
                elif m.group(2) != "{":
                    targets.append(m.group(2))
            for t in targets:
                if t in ("self", "super", "mpi_export") or t == me:
                    continue
                if not (os.path.exists(os.path.join(src, t + ".rs")) or os.path.isdir(os.path.join(src, t))):
                    continue  # a macro or an item of lib.rs
                edges.setdefault((me, t), []).append(f"{rel}:{n}")

# Strongly connected components (Tarjan, iterative).
graph = {m: sorted({b for (a, b) in edges if a == m}) for m in mods}
index, low, onstack, stack, comps, counter = {}, {}, set(), [], [], [0]
def strongconnect(v):
    work = [(v, 0)]
    index[v] = low[v] = counter[0]; counter[0] += 1
    stack.append(v); onstack.add(v)
    while work:
        node, i = work[-1]
        if i < len(graph[node]):
            work[-1] = (node, i + 1)
            w = graph[node][i]
            if w not in index:
                index[w] = low[w] = counter[0]; counter[0] += 1
                stack.append(w); onstack.add(w)
                work.append((w, 0))
            elif w in onstack:
                low[node] = min(low[node], index[w])
        else:
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop(); onstack.discard(w); comp.append(w)
                    if w == node: break
                comps.append(sorted(comp))
for m in sorted(mods):
    if m not in index:
        strongconnect(m)

bad = 0
circles = [c for c in comps if len(c) > 1]
for c in sorted(circles, key=len, reverse=True):
    bad += 1
    cs = set(c)
    inner = sorted((a, b) for (a, b) in edges if a in cs and b in cs)
    print(f"circle of {len(c)} modules: {' '.join(c)}")
    print(f"  {len(inner)} imports inside it:")
    for a, b in inner:
        where = edges[(a, b)]
        more = f" (+{len(where) - 3} more)" if len(where) > 3 else ""
        print(f"    {a} -> {b}: {', '.join(where[:3])}{more}")
if not circles:
    print("ok   no import circle between the modules of ferry-mpi")

ff = sorted((a, b) for (a, b) in edges if layer(a) == "feature" and layer(b) == "feature")
if ff:
    bad += 1
    print(f"{len(ff)} imports of a feature by another feature:")
    for a, b in ff:
        where = edges[(a, b)]
        more = f" (+{len(where) - 3} more)" if len(where) > 3 else ""
        print(f"  {a} -> {b}: {', '.join(where[:3])}{more}")
else:
    print("ok   no feature imports another feature")

# Imports that go up the ladder.
up = sorted((a, b) for (a, b) in edges if RANK[layer(a)] < RANK[layer(b)] or (layer(b) in ("lifecycle", "boundary") and layer(a) != "exports"))
if up:
    print(f"{len(up)} imports up the ladder (base < objects < service < feature < lifecycle < boundary < exports; lifecycle and boundary for the exports only):")
    for a, b in up:
        where = edges[(a, b)]
        more = f" (+{len(where) - 3} more)" if len(where) > 3 else ""
        print(f"  {a} ({layer(a)}) -> {b} ({layer(b)}): {', '.join(where[:3])}{more}")
    bad += 1
else:
    print("ok   nothing imports a layer above its own")

if bad and strict:
    print("FAIL mpi layers")
    sys.exit(1)
if strict:
    print("ok   mpi layers: base < objects < services < features < lifecycle < boundary < exports")
if mode == "ratchet":
    largest = max((len(c) for c in circles), default=0)
    problems = []
    if up:
        problems.append(f"{len(up)} imports up the ladder")
    if largest > MAX_CIRCLE:
        problems.append(f"a circle of {largest} modules (at most {MAX_CIRCLE})")
    if len(circles) > 1:
        problems.append(f"{len(circles)} circles (at most one)")
    if len(ff) > MAX_FEATURE_IMPORTS:
        problems.append(f"{len(ff)} imports of a feature by another (at most {MAX_FEATURE_IMPORTS})")
    if problems:
        print("FAIL mpi layers: " + "; ".join(problems))
        sys.exit(1)
    print(f"ok   mpi layers: nothing up the ladder; circle of {largest} modules (at most {MAX_CIRCLE}), {len(ff)} feature imports (at most {MAX_FEATURE_IMPORTS})")
PY
