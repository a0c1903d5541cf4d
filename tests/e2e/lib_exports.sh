#!/usr/bin/env bash
# libtrc.so exports the public API and nothing else: every dynamic symbol
# it defines is a function declared in include/trc/*.h, and every such
# function is exported (packaging/libtrc.map lists them).  The recorder,
# the walker, the exporters and lib/util (trc_malloc & co.) stay inside.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build}
so=$BUILD/libtrc.so
command -v nm > /dev/null || { echo "skip: nm not installed (binutils)"; exit 77; }
[ -f "$so" ] || { echo "FAIL: $so not built"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The public functions: trc_ names declared with a parameter list in the
# headers as the compiler sees them (comments gone, macros expanded).
for h in include/trc/*.h; do
  printf '#include "%s"\n' "${h#include/}" | ${CC:-cc} -E -P -Iinclude -x c - ||
    { echo "FAIL: cannot preprocess $h"; exit 1; }
done | grep -oE '\btrc_[a-z0-9_]+\(' | tr -d '(' | sort -u > "$tmp/public"
[ -s "$tmp/public" ] || { echo "FAIL: no trc_ functions found in include/trc/*.h"; exit 1; }
nm -D --defined-only "$so" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' | sort -u > "$tmp/exports"
[ -s "$tmp/exports" ] || { echo "FAIL: $so exports nothing"; exit 1; }

fails=0
extra=$(comm -13 "$tmp/public" "$tmp/exports")
missing=$(comm -23 "$tmp/public" "$tmp/exports")
if [ -n "$extra" ]; then
  echo "FAIL: $so exports $(echo "$extra" | wc -l) symbols not in include/trc/*.h:"
  echo "$extra" | head -20 | sed 's/^/  /'
  fails=1
fi
if [ -n "$missing" ]; then
  echo "FAIL: public functions not exported by $so (add them to packaging/libtrc.map):"
  echo "$missing" | sed 's/^/  /'
  fails=1
fi
[ $fails = 0 ] || exit 1
echo "ok: $so exports exactly the $(wc -l < "$tmp/public") functions of include/trc/*.h"
