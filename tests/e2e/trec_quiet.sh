#!/usr/bin/env bash
# A blocked thread's stack repeated from its switch records (lib/rec/
# switches.c) is still the right one: a thread that blocks in three
# places in turn is sampled in each, in order, about equally, idle; with
# switch records most of its samples are repeats, with
# TREC_THREAD_STATE=proc none are.  Every interpreter found.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"
DUMP="$BIN/trc-dump"

one() {
  local py=$1 ver=$2 tag=$3 mode rc
  for mode in perf proc; do
    local out="$TMPD/$tag-$mode.trc"
    rc=0
    if [ $mode = proc ]; then
      TREC_THREAD_STATE=proc TREC_SELF_TIMING=1 timeout 120 "$TREC" -o "$out" "$py" "$FIX/trec_quiet.py" 0.4 2>"$out.err" || rc=$?
    else
      TREC_SELF_TIMING=1 timeout 120 "$TREC" -o "$out" "$py" "$FIX/trec_quiet.py" 0.4 2>"$out.err" || rc=$?
    fi
    [ $rc -eq 0 ] || { echo "trec ($mode) exited $rc"; cat "$out.err"; return 1; }
    "$DUMP" -e "$out" >"$out.txt" 2>"$out.dumperr" || { echo "trc-dump -e $mode failed"; cat "$out.dumperr"; return 1; }
    echo "-- $mode: $(grep self-timing "$out.err")"
    "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/quiet_check.py" "$out.txt" "$out.err" $mode || return 1
  done
}

for_each_python one
finish
