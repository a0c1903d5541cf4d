#!/usr/bin/env bash
# tests/e2e/one_grow.sh — arrays grow with lib/util's trcu_grow only
# (docs/design/architecture.md §5): no file of the code (format/, lib/,
# tools/, include/) outside lib/util calls realloc or trc_realloc.  Every
# realloc in that code grows an array, and a hand-written one has its own
# limit, overflow and failure handling to get wrong; lib/util/grow.c has
# them once.  Comment lines are not code and are skipped.
#
# ALLOW lists the justified exceptions, "file: reason"; an entry whose
# file no longer calls realloc fails too, so the list stays short.
#
# Fails (exit 1, one "file:line: what" per problem).  The checker first
# runs on a made-up tree whose problems are known, so a checker that
# finds nothing (or too much) fails here too.  Exit 0 pass.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"

ALLOW=(
  "format/buf.c: the codec's byte buffer; trcu_grow would zero megabytes that inflate overwrites at once (its comment has the figures)"
)

# shellcheck source=tests/e2e/lib/only_in_util.sh
. tests/e2e/lib/only_in_util.sh
check() { calls_outside_util "$1" '(^|[^A-Za-z0-9_])(trc_)?realloc[[:space:]]*\('; }

# The checker on a tree with known problems: a doubling loop with
# trc_realloc, one with plain realloc, a realloc in lib/util (allowed),
# a comment naming trc_realloc( (not code).
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
mkdir -p "$fake/lib/util" "$fake/format" "$fake/tools/common"
cat >"$fake/format/b.c" <<'EOF'
/* trc_realloc(p, n) in a comment is not a call */
static int grow(char **p, size_t *cap) {
    size_t n = *cap ? *cap * 2 : 16;
    char *q = trc_realloc(*p, n);
    return q ? 0 : -1;
}
EOF
cat >"$fake/tools/common/c.c" <<'EOF'
    v = realloc (v, cap *= 2);
    v = my_realloc(v, cap);
EOF
printf 'void *trcu(void *p, size_t n) { return trc_realloc(p, n); }\n' >"$fake/lib/util/grow.c"
got=$(check "$fake" | cut -d: -f1,2 | tr '\n' ' ')
want="format/b.c:4 tools/common/c.c:1 "
if [ "$got" != "$want" ]; then
  echo "FAIL: the checker found [$got] in the made-up tree, not [$want]"
  exit 1
fi

found=$(check .)
judge_calls one_grow "$found" 'grows an array by hand; use trcu_grow/trcu_grow32 (lib/util/grow.h)' 'allowed to realloc but no longer does'
echo "one_grow: ok (no realloc outside lib/util but ${#ALLOW[@]} allowed file(s))"
