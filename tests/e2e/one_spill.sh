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

allowed() {
  local e
  for e in "${ALLOW[@]}"; do
    [ "${e%%:*}" = "$1" ] && return 0
  done
  return 1
}

# check DIR: every tmpfile or fseeko call in the code under DIR outside
# lib/util, one "file:line: text" a line.
check() {
  local dir=$1
  (cd "$dir" && for d in format lib tools include; do
      [ -d "$d" ] && find "$d" -name '*.[ch]' -not -path 'lib/util/*'
    done | LC_ALL=C sort |
    while read -r f; do
      grep -nE '(^|[^A-Za-z0-9_])(tmpfile|fseeko)[[:space:]]*\(' "$f" |
        grep -vE '^[0-9]+:[[:space:]]*(/\*|\*|//)' |
        sed "s|^|$f:|"
    done)
}

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

fails=0
found=$(check .)
while IFS= read -r line; do
  [ -n "$line" ] || continue
  f=${line%%:*}
  allowed "$f" && continue
  echo "$line: a temporary file by hand; use trcu_spill (lib/util/spill.h)"
  fails=$((fails + 1))
done <<<"$found"
for e in "${ALLOW[@]}"; do
  f=${e%%:*}
  if ! grep -q "^$f:" <<<"$found"; then
    echo "$f: allowed a temporary file but no longer makes one; drop it from ALLOW"
    fails=$((fails + 1))
  fi
done
if [ "$fails" -ne 0 ]; then
  echo "one_spill: $fails problem(s)"
  exit 1
fi
echo "one_spill: ok (no tmpfile/fseeko outside lib/util but ${#ALLOW[@]} allowed file(s))"
