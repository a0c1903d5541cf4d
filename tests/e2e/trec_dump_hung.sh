#!/usr/bin/env bash
# trec --dump --pid on a hung program, every interpreter found
# (fixtures/workloads/dump_hung.py, run from a folder with a non-ASCII
# name): a thread blocked on a lock, one in a busy loop, one with a
# non-ASCII name and the main thread asleep are each listed with their
# name, native id, state and innermost frame, and a thread started from
# C (no Python thread state) by its OS name and id (tests/e2e/lib/
# dump_hung_check.py), as text and JSON, each dump within a second.
# The target is never stopped: no task of it is in a stopped state
# before, during (polled while the dump runs) or after the dump.  Then,
# stopped with SIGSTOP, every thread is shown "stopped".
# retry-once: reads a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# task_states PID: the state letter of each of its tasks, one a line
task_states() {
  local f
  for f in /proc/"$1"/task/*/stat; do
    sed 's/.*) //' "$f" 2>/dev/null | cut -d' ' -f1
  done
}

# stopped_seen PID: fails when a task of PID is stopped ('T' or 't')
stopped_seen() { task_states "$1" | grep -q '^[Tt]$'; }

# timed_dump TARGET OUT ARGS...: trec --dump ARGS --pid TARGET into OUT;
# fails when it exits non-zero, takes a second or more, or a task of the
# target was seen stopped meanwhile.
timed_dump() {
  local target=$1 out=$2 t0 t1 rc=0 poll
  shift 2
  ( while :; do stopped_seen "$target" && { echo stopped; exit 0; }; done ) >"$out.poll" &
  poll=$!
  t0=$(now_ms)
  timeout 10 "$TREC" --dump "$@" --pid "$target" >"$out" 2>"$out.err" || rc=$?
  t1=$(now_ms)
  kill $poll 2>/dev/null
  wait $poll 2>/dev/null
  [ $rc -eq 0 ] || { echo "trec --dump $*: exit $rc: $(cat "$out.err")"; return 1; }
  [ $((t1 - t0)) -lt 1000 ] || { echo "trec --dump $* took $((t1 - t0)) ms"; return 1; }
  [ ! -s "$out.poll" ] || { echo "trec --dump $*: a task of the target was stopped"; return 1; }
  echo "trec --dump $*: $((t1 - t0)) ms"
}

one() {
  local py=$1 ver=$2 tag=$3 i
  local d="$TMPD/$tag/dümp-目录 ü"
  mkdir -p "$d"
  cp "$FIX/dump_hung.py" "$d/hung_программа.py"
  "$py" "$d/hung_программа.py" "$d/ready" &
  local target=$!
  for i in $(seq 100); do [ -e "$d/ready" ] && break; sleep 0.1; done
  [ -e "$d/ready" ] || { kill $target; echo "target never got ready"; return 1; }
  sleep 0.3 # from writing READY into the marked lines
  local ok=0
  if stopped_seen $target; then
    echo "target stopped before the dump"
  elif timed_dump $target "$d/text" && timed_dump $target "$d/json" --json &&
    "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/dump_hung_check.py" "$d/hung_программа.py" "$d/ready" \
      "$d/text" "$d/json"; then
    stopped_seen $target && echo "target stopped after the dump" || ok=1
  fi
  if [ $ok -eq 1 ]; then
    ok=0
    kill -STOP $target
    # the signal reaches the threads a moment later
    for i in $(seq 100); do task_states $target | grep -qv '^T$' || break; sleep 0.02; done
    timeout 10 "$TREC" --dump --pid $target >"$d/stext" 2>"$d/stext.err" &&
      timeout 10 "$TREC" --dump --json --pid $target >"$d/sjson" 2>"$d/sjson.err" &&
      "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/dump_hung_check.py" --stopped "$d/hung_программа.py" \
        "$d/ready" "$d/stext" "$d/sjson" && ok=1
    kill -CONT $target
  fi
  kill $target
  wait $target 2>/dev/null
  [ $ok -eq 1 ] || { echo "---- text:"; cat "$d/text" 2>/dev/null; return 1; }
}

for_each_python one
finish
