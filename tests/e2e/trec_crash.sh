#!/usr/bin/env bash
# A program that dies of SIGSEGV: trec exits 139 and the trace is
# complete with the exit recorded.  trec killed with SIGKILL: the trace
# is readable up to the last complete chunk (chunks flush every ~100 ms)
# and the program keeps running.  Every interpreter found.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

DUMP="$BIN/trc-dump"

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  mkdir -p "$TMPD/$tag"
  local out="$TMPD/$tag/segv.trc"
  timeout 60 "$TREC" -q -o "$out" "$py" "$FIX/trec_crash.py" 0.4 2>"$TMPD/$tag/segv.err" || rc=$?
  [ $rc -eq 139 ] || { echo "trec exited $rc, want 139"; return 1; }
  dump_trace "$out" || return 1
  check crash "$out.txt" "$FIX/trec_crash.py" "$ver" || return 1

  out="$TMPD/$tag/killed.trc"
  "$TREC" -q -o "$out" "$py" "$FIX/trec_basic.py" 0.5 &
  local trec=$!
  sleep 1.6
  local kids
  kids=$(cat /proc/$trec/task/*/children 2>/dev/null)
  kill -KILL $trec
  wait $trec 2>/dev/null
  [ -n "$kids" ] || { echo "program not found under trec"; return 1; }
  for k in $kids; do kill -0 "$k" 2>/dev/null || { echo "program died with trec"; return 1; }; done
  kill $kids 2>/dev/null
  dump_trace "$out" damaged-ok || return 1
  check killed "$out.txt" "$FIX/trec_basic.py" "$ver" 1.0 || return 1
  if [ -x "$DUMP" ]; then
    rc=0
    "$DUMP" --check "$out" >/dev/null 2>"$TMPD/$tag/dump.err" || rc=$?
    [ $rc -le 1 ] || { echo "trc-dump --check: exit $rc: $(cat "$TMPD/$tag/dump.err")"; return 1; }
  fi
}

for_each_python one
finish
