#!/usr/bin/env bash
# -o -: the trace goes to trec's stdout (a file or a pipe) and a program
# printing a lot on its own stdout cannot corrupt it: the program's
# stdout is sent to stderr.  Every interpreter found.
. "$(dirname "$0")/lib/trec_common.sh"

LINES=20000

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  mkdir -p "$TMPD/$tag"
  local out="$TMPD/$tag/out.trc" err="$TMPD/$tag/err"
  timeout 60 "$TREC" -q -o - "$py" "$FIX/trec_chatty.py" $LINES >"$out" 2>"$err" || rc=$?
  [ $rc -eq 0 ] || { echo "trec exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check stdout "$out.txt" "$FIX/trec_chatty.py" "$ver" || return 1
  local n
  n=$(grep -c '^line [0-9]* of program output$' "$err")
  [ "$n" -eq $LINES ] || { echo "program output on stderr: $n lines, want $LINES"; return 1; }

  out="$TMPD/$tag/pipe.trc"
  set -o pipefail
  timeout 60 "$TREC" -q -o - "$py" "$FIX/trec_chatty.py" $LINES 2>/dev/null | cat >"$out" || rc=$?
  set +o pipefail
  [ $rc -eq 0 ] || { echo "trec | cat exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check stdout "$out.txt" "$FIX/trec_chatty.py" "$ver"
}

for_each_python one
finish
