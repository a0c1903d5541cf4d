#!/usr/bin/env bash
# Several named threads, one busy and two sleeping: every thread sampled
# every tick, threading names, on-CPU vs idle state; with --gil, which
# thread holds the GIL; the busy thread on CPU in at least half the share of a CPU
# the program got (measured around it: lib/cpu_of.py).  Every interpreter found.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  mkdir -p "$TMPD/$tag"
  local out="$TMPD/$tag/t.trc"
  # the program's CPU time is the reference for its on-CPU samples
  TREC_SELF_TIMING=1 "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/cpu_of.py" "$out.usage" \
    timeout 120 "$TREC" -q -o "$out" "$py" "$FIX/trec_threads.py" 1.2 2>"$out.trec-err" || rc=$?
  [ $rc -eq 0 ] || { cat "$out.trec-err"; echo "trec exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check threads "$out.txt" "$FIX/trec_threads.py" "$ver" "usage=$out.usage,$out.trec-err" || return 1
  out="$TMPD/$tag/gil.trc"
  TREC_SELF_TIMING=1 "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/cpu_of.py" "$out.usage" \
    timeout 120 "$TREC" -q --gil -o "$out" "$py" "$FIX/trec_threads.py" 1.2 2>"$out.trec-err" || rc=$?
  [ $rc -eq 0 ] || { cat "$out.trec-err"; echo "trec --gil exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check threads "$out.txt" "$FIX/trec_threads.py" "$ver" gil "usage=$out.usage,$out.trec-err"
}

for_each_python one
finish
