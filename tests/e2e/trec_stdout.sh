#!/usr/bin/env bash
# -o -: the trace goes to trec's stdout (a file or a pipe) and a program
# printing a lot on its own stdout cannot corrupt it: the program's
# stdout is sent to stderr.  Every interpreter found.  Without -q, so
# that a failing case shows what trec said.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

LINES=20000

# trec's own lines in a stderr shared with the program
trec_said() { grep -v '^line [0-9]* of program output$' "$1" | head -n 5; }

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  mkdir -p "$TMPD/$tag"
  local out="$TMPD/$tag/out.trc" err="$TMPD/$tag/err"
  timeout 60 "$TREC" -o - "$py" "$FIX/trec_chatty.py" $LINES >"$out" 2>"$err" || rc=$?
  [ $rc -eq 0 ] || { echo "trec >file exited $rc"; trec_said "$err"; return 1; }
  dump_trace "$out" || return 1
  check stdout "$out.txt" "$FIX/trec_chatty.py" "$ver" || { echo "(trace on a file; trec said:)"; trec_said "$err"; return 1; }
  local n
  n=$(grep -c '^line [0-9]* of program output$' "$err")
  [ "$n" -eq $LINES ] || { echo "program output on stderr: $n lines, want $LINES"; return 1; }

  out="$TMPD/$tag/pipe.trc"
  set -o pipefail
  timeout 60 "$TREC" -o - "$py" "$FIX/trec_chatty.py" $LINES 2>"$err.pipe" | cat >"$out" || rc=$?
  set +o pipefail
  [ $rc -eq 0 ] || { echo "trec | cat exited $rc"; trec_said "$err.pipe"; return 1; }
  dump_trace "$out" || return 1
  check stdout "$out.txt" "$FIX/trec_chatty.py" "$ver" || { echo "(trace on a pipe; trec said:)"; trec_said "$err.pipe"; return 1; }
}

for_each_python one
finish
