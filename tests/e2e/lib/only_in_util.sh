# tests/e2e/lib/only_in_util.sh — sourced by the "one way to do X" guards
# (one_grow.sh, one_spill.sh): find the calls of some functions in the
# code (format/, lib/, tools/, include/) outside lib/util, where the one
# helper for them lives, and judge them against the guard's ALLOW list
# ("file: reason" entries; an entry whose file no longer makes such a
# call fails too, so the list stays short).  Comment lines are not code
# and are skipped.

# calls_outside_util DIR REGEX: every line matching REGEX in the code
# under DIR outside lib/util, one "file:line: text" a line.
calls_outside_util() {
  local dir=$1 re=$2
  (cd "$dir" && for d in format lib tools include; do
      [ -d "$d" ] && find "$d" -name '*.[ch]' -not -path 'lib/util/*'
    done | LC_ALL=C sort |
    while read -r f; do
      grep -nE "$re" "$f" |
        grep -vE '^[0-9]+:[[:space:]]*(/\*|\*|//)' |
        sed "s|^|$f:|"
    done)
}

# allowed FILE: 0 when ALLOW has an entry for FILE.
allowed() {
  local e
  for e in "${ALLOW[@]}"; do
    [ "${e%%:*}" = "$1" ] && return 0
  done
  return 1
}

# judge_calls NAME FOUND USE STALE: one line per call in FOUND that ALLOW
# does not excuse ("file:line: text: USE") and per ALLOW entry FOUND no
# longer has ("file: STALE"); exit 1 if any, else an "ok" line.
judge_calls() {
  local name=$1 found=$2 use=$3 stale=$4 line f e fails=0
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    f=${line%%:*}
    allowed "$f" && continue
    echo "$line: $use"
    fails=$((fails + 1))
  done <<<"$found"
  for e in "${ALLOW[@]}"; do
    f=${e%%:*}
    if ! grep -q "^$f:" <<<"$found"; then
      echo "$f: $stale; drop it from ALLOW"
      fails=$((fails + 1))
    fi
  done
  if [ "$fails" -ne 0 ]; then
    echo "$name: $fails problem(s)"
    exit 1
  fi
}
