#!/bin/sh
# ABI check of include/mcapi.h (and the include/mca.h it includes): the headers compile cleanly
# in every C and C++ mode; mcapi.h declares exactly the functions signatures.c lists, each with
# the parameter types of the MCAPI 2.000 specification; every constant has the value
# expected.def gives it (the MCA 2.0.x reference header's, or Ferry's documented choice), and
# expected.def names every constant the headers define. Exits non-zero, saying what differs,
# on any mismatch. Needs no library: only the compilers.
#
# Environment: CC, CXX (default cc, c++).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
CC=${CC:-cc}
CXX=${CXX:-c++}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

say() { printf 'mcapi-abi: %s\n' "$*"; }
die() { printf 'mcapi-abi: FAILED: %s\n' "$*" >&2; exit 1; }

# 1. Each header alone compiles without a warning in every language mode.
for header in mca.h mcapi.h; do
    printf '#include <%s>\nint main(void) { return MCA_TRUE - 1; }\n' "$header" > "$tmp/include.c"
    for std in c89 c99 c11 c17; do
        "$CC" -std=$std -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$root/include" \
            "$tmp/include.c" || die "$header does not compile cleanly as $std"
    done
    for std in c++98 c++11 c++17; do
        "$CXX" -x c++ -std=$std -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$root/include" \
            "$tmp/include.c" || die "$header does not compile cleanly as $std"
    done
done
say "mca.h and mcapi.h compile cleanly as C89/C99/C11/C17 and C++98/11/17"

# 2. mcapi.h declares exactly the functions signatures.c lists.
"$CC" -E -P -x c -I"$root/include" "$root/include/mcapi.h" | tr '\n' ' ' \
    | grep -oE '\bmcapi_[a-z0-9_]+ *\(' | tr -d ' (' | sort -u > "$tmp/declared.txt"
sed -n 's/^SIG([^,]*, \(mcapi_[a-z0-9_]*\),.*/\1/p' "$here/signatures.c" | sort > "$tmp/listed.txt"
diff -u "$tmp/listed.txt" "$tmp/declared.txt" \
    || die "functions declared by mcapi.h (+) differ from those signatures.c lists (-)"
say "mcapi.h declares the $(wc -l < "$tmp/listed.txt" | tr -d ' ') functions listed, no more"

# 3. Every prototype has the specification's parameter types, as C and as C++.
"$CC" -std=c99 -Wall -Wextra -pedantic -Werror -Werror=incompatible-pointer-types \
    -I"$root/include" -c "$here/signatures.c" -o "$tmp/sig.o" \
    || die "a prototype of mcapi.h differs from signatures.c (C)"
"$CXX" -x c++ -Wall -Wextra -Werror -I"$root/include" -c "$here/signatures.c" \
    -o "$tmp/sig_cxx.o" || die "a prototype of mcapi.h differs from signatures.c (C++)"
say "every prototype has the parameter types of the specification (C and C++)"

# 4. expected.def names every constant the headers define, and only those.
table_names() {
    grep -vE '^[[:space:]]*(#|$)' "$here/expected.def" | awk '{ print $1 }' \
        | grep -E '^[A-Z_][A-Z0-9_]*$' | sort -u
}
table_names > "$tmp/table.txt"
{
    # Object-like macros with a value, less include guards and the parameter markers.
    "$CC" -dM -E -x c -I"$root/include" "$root/include/mcapi.h" \
        | awk '$1 == "#define" && $2 ~ /^(MCAPI_|MCA_|FERRY_MCAPI_)/ && $2 !~ /\(/ && NF > 2 { print $2 }' \
        | grep -vE '^(FERRY_MCAPI_H|FERRY_MCA_H|MCAPI_IN|MCAPI_OUT|MCA_IN|MCA_OUT|MCAPI_DECL_ALIGNED|MCA_DECL_ALIGNED)$'
    # Enumeration constants (every one is written NAME = VALUE).
    "$CC" -E -P -x c -I"$root/include" "$root/include/mcapi.h" \
        | grep -oE '\bMCAPI_[A-Z0-9_]+ *= *[0-9A-Z]' | sed 's/ *=.*//'
} | sort -u > "$tmp/defined.txt"
diff -u "$tmp/table.txt" "$tmp/defined.txt" \
    || die "constants defined by the headers (+) differ from those expected.def names (-)"
say "expected.def names all $(wc -l < "$tmp/defined.txt" | tr -d ' ') constants of the headers"

# 5. Every value equals its expected one.
grep -vE '^[[:space:]]*(#|$)' "$here/expected.def" \
    | awk '{ printf "PIN(%s, %s, \"%s\")\n", $1, $2, $3 }' > "$tmp/expected.inc"
"$CC" -std=c11 -Wall -Wextra -pedantic -Werror -I"$root/include" -I"$tmp" \
    "$here/values.c" -o "$tmp/values" || die "values.c does not build against mcapi.h"
"$tmp/values" || die "a constant of mcapi.h differs from expected.def"
"$CXX" -x c++ -std=c++11 -Wall -Wextra -Werror -I"$root/include" -I"$tmp" \
    "$here/values.c" -o "$tmp/values_cxx" || die "values.c does not build as C++"
"$tmp/values_cxx" > /dev/null || die "a constant of mcapi.h differs from expected.def (C++)"
say "every constant has its expected value, $(grep -c '"ref")$' "$tmp/expected.inc") of them the reference header's"
grep -E '^[^#[:space:]][^[:space:]]*[[:space:]]+[^[:space:]]+[[:space:]]+diff' "$here/expected.def" | while read -r name value _ note; do
    say "  differs from the reference on purpose: $name = $value ${note#\# }"
done
