#!/usr/bin/env bash
# Several named threads, one busy and two sleeping: every thread sampled
# every tick, threading names, on-CPU vs idle state; with --gil, which
# thread holds the GIL.  Every interpreter found.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  mkdir -p "$TMPD/$tag"
  local out="$TMPD/$tag/t.trc"
  timeout 120 "$TREC" -q -o "$out" "$py" "$FIX/trec_threads.py" 1.2 || rc=$?
  [ $rc -eq 0 ] || { echo "trec exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check threads "$out.txt" "$FIX/trec_threads.py" "$ver" || return 1
  out="$TMPD/$tag/gil.trc"
  timeout 120 "$TREC" -q --gil -o "$out" "$py" "$FIX/trec_threads.py" 1.2 || rc=$?
  [ $rc -eq 0 ] || { echo "trec --gil exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check threads "$out.txt" "$FIX/trec_threads.py" "$ver" gil
}

for_each_python one
finish
