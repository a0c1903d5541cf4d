#!/usr/bin/env bash
# Children are recorded by default: a multiprocessing child (fork), one
# (spawn) and a subprocess child are all recorded in one trace, each with
# its own process record, samples and exit; --subprocesses (-s), now the
# default, is still accepted; with --no-subprocesses only the program
# itself is recorded.  Every interpreter found.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

PHASE=0.4

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  mkdir -p "$TMPD/$tag"
  local out="$TMPD/$tag/sub.trc"
  timeout 120 "$TREC" -q -o "$out" "$py" "$FIX/trec_subproc.py" $PHASE || rc=$?
  [ $rc -eq 0 ] || { echo "trec exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check subprocesses "$out.txt" "$FIX/trec_subproc.py" "$ver" $PHASE || return 1
  out="$TMPD/$tag/s.trc"
  timeout 120 "$TREC" -q -s -o "$out" "$py" "$FIX/trec_subproc.py" 0.2 || rc=$?
  [ $rc -eq 0 ] || { echo "trec -s exited $rc"; return 1; }
  dump_trace "$out" || return 1
  [ "$(grep -c '^process' "$out.txt")" -ge 4 ] || { echo "trec -s: not every child recorded"; return 1; }
  out="$TMPD/$tag/nosub.trc"
  timeout 120 "$TREC" -q --no-subprocesses -o "$out" "$py" "$FIX/trec_subproc.py" 0.1 || rc=$?
  [ $rc -eq 0 ] || { echo "trec exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check single "$out.txt" "$FIX/trec_subproc.py" "$ver"
}

for_each_python one
finish
