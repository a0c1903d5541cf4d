#!/usr/bin/env bash
# Sampling accuracy: the fixture measures each function's CPU time
# itself (time.thread_time); trec's on-CPU sample shares per leaf
# function must agree within 2 percentage points.  Every interpreter.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

TOTAL=${TREC_ACCURACY_SECONDS:-2.5}

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  mkdir -p "$TMPD/$tag"
  local out="$TMPD/$tag/acc.trc" measured="$TMPD/$tag/measured.json"
  timeout 120 "$TREC" -q -o "$out" "$py" "$FIX/trec_accuracy.py" "$measured" "$TOTAL" || rc=$?
  [ $rc -eq 0 ] || { echo "trec exited $rc"; return 1; }
  dump_trace "$out" || return 1
  "$SHARES" "$out" >"$out.shares" || { echo "trc_shares failed"; return 1; }
  check accuracy "$out.txt" "$FIX/trec_accuracy.py" "$ver" "$out.shares" "$measured"
}

for_each_python one
finish
