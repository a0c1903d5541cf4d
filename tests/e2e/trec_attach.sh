#!/usr/bin/env bash
# --pid: attach to a running program for a duration, and again until
# SIGINT; both times the target keeps running untouched (never stopped)
# and the trace is complete.  Every interpreter found.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

one() {
  local py=$1 ver=$2 tag=$3 rc=0 i
  mkdir -p "$TMPD/$tag"
  local ready="$TMPD/$tag/ready"
  "$py" "$FIX/trec_threads.py" 6 "$ready" &
  local target=$!
  for i in $(seq 100); do [ -e "$ready" ] && break; sleep 0.1; done
  [ -e "$ready" ] || { kill $target; echo "target never got ready"; return 1; }

  local out="$TMPD/$tag/att.trc"
  timeout 60 "$TREC" -q --pid $target --duration 1 -o "$out" || rc=$?
  [ $rc -eq 0 ] || { kill $target; echo "trec --pid exited $rc"; return 1; }
  local state
  state=$(awk '{print $3}' /proc/$target/stat 2>/dev/null)
  case "$state" in R | S) ;; *) kill $target; echo "target state after detach: '$state'"; return 1 ;; esac
  dump_trace "$out" || { kill $target; return 1; }
  check attach "$out.txt" "$FIX/trec_threads.py" "$ver" || { kill $target; return 1; }

  out="$TMPD/$tag/int.trc"
  "$TREC" -q --pid $target -o "$out" &
  local trec=$!
  sleep 0.7
  kill -INT $trec
  rc=0
  wait $trec || rc=$?
  kill -0 $target 2>/dev/null || { echo "target died after SIGINT to trec"; return 1; }
  kill $target
  wait $target 2>/dev/null
  [ $rc -eq 0 ] || { echo "trec --pid after SIGINT exited $rc"; return 1; }
  dump_trace "$out" || return 1
  grep -q '^end' "$out.txt" || { echo "no segment end after SIGINT"; return 1; }
  grep -q '^sample' "$out.txt" || { echo "no samples before SIGINT"; return 1; }
}

for_each_python one
finish
