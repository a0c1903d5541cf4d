#!/usr/bin/env bash
# tests/e2e/one_spill.sh — records that do not fit in memory go to a
# temporary file through lib/util's spill helper only
# (docs/design/architecture.md §5): no file of the code (format/, lib/,
# tools/, include/) outside lib/util calls tmpfile or fseeko.  A hand-made
# spill file has its own offsets, seeks between reads and writes and
# failure handling to get wrong; lib/util/spill.c has them once.
# Comment lines are not code and are skipped.
#
# ALLOW lists the justified exceptions, "file: reason"; an entry whose
# file no longer calls them fails too, so the list stays short.
#
# Fails (exit 1, one "file:line: what" per problem).  The checker first
# runs on a made-up tree whose problems are known, so a checker that
# finds nothing (or too much) fails here too.  Exit 0 pass.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"

ALLOW=(
  "tools/common/top_source.c: the output of the program trc-top starts, kept as text to show, not records read back by offset"
)

# shellcheck source=tests/e2e/lib/only_in_util.sh
. tests/e2e/lib/only_in_util.sh
check() { calls_outside_util "$1" '(^|[^A-Za-z0-9_])(tmpfile|fseeko)[[:space:]]*\('; }

# The checker on a tree with known problems: a spill by hand in lib/, a
# seek in tools/, the helper itself in lib/util (allowed), a comment
# naming tmpfile( (not code), a name that only ends in tmpfile.
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
mkdir -p "$fake/lib/util" "$fake/lib/export" "$fake/tools/common"
cat >"$fake/lib/export/a.c" <<'EOF2'
/* tmpfile() in a comment is not a call */
static int spill(FILE **f) {
    if (!*f && !(*f = tmpfile ()))
        return -1;
    return my_tmpfile(f);
}
EOF2
cat >"$fake/tools/common/c.c" <<'EOF2'
    x = 1;
    if (fseeko(f, off, SEEK_SET) != 0)
EOF2
printf 'FILE *trcu(void) { return tmpfile(); }\n' >"$fake/lib/util/spill.c"
got=$(check "$fake" | cut -d: -f1,2 | tr '\n' ' ')
want="lib/export/a.c:3 tools/common/c.c:2 "
if [ "$got" != "$want" ]; then
  echo "FAIL: the checker found [$got] in the made-up tree, not [$want]"
  exit 1
fi

found=$(check .)
judge_calls one_spill "$found" 'a temporary file by hand; use trcu_spill (lib/util/spill.h)' 'allowed a temporary file but no longer makes one'
echo "one_spill: ok (no tmpfile/fseeko outside lib/util but ${#ALLOW[@]} allowed file(s))"
