#!/usr/bin/env bash
# --blocking (threads stopped with ptrace while their stacks are read):
# a started program is recorded with its stacks checked against the
# source and its exit status passed on; a multi-threaded one keeps every
# thread and its states; Ctrl-C still reaches the program; --subprocesses
# still records the children; a CPU-bound program is slowed, not crippled;
# and an attached target is never left stopped or traced: not after
# --duration ends, nor Ctrl-C, nor after trec is SIGKILLed mid-recording.  Every
# interpreter found; then once: ptrace refused (another tracer holds the
# target) is exit 2 with one line naming the fix.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

PHASE=0.4
SUBPHASE=0.8

# Every thread of PID runs or sleeps (not stopped, 'T'/'t') and no
# tracer holds it.  The state can be 't' for a moment only while a
# tracer still holds the thread, so no tracer is checked first.
not_held() {
  local pid=$1 f st tracer
  for f in /proc/$pid/task/*/status; do
    tracer=$(awk '/^TracerPid:/ {print $2}' "$f" 2>/dev/null) || continue
    [ -n "$tracer" ] || continue # ended meanwhile
    [ "$tracer" = 0 ] || { echo "$f: still traced by $tracer"; return 1; }
    st=$(awk '/^State:/ {print $2}' "$f" 2>/dev/null)
    case "$st" in R | S | D | "") ;; *) echo "$f: state '$st' after trec let go"; return 1 ;; esac
  done
}

# Starts trec_threads.py for $2 seconds in $1 and prints its pid once all
# its threads run.
start_target() {
  local py=$1 dir=$2 secs=$3 i
  "$py" "$FIX/trec_threads.py" "$secs" "$dir/ready" >/dev/null &
  local pid=$!
  for i in $(seq 100); do [ -e "$dir/ready" ] && break; sleep 0.1; done
  [ -e "$dir/ready" ] || { kill $pid; return 1; }
  rm -f "$dir/ready"
  echo $pid
}

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  local dir="$TMPD/$tag"
  mkdir -p "$dir"

  # stacks checked against the source, as without --blocking
  local out="$dir/basic.trc"
  # (the program's CPU time, measured around trec, is the reference for
  # its on-CPU samples, as in trec_basic.sh)
  TREC_SELF_TIMING=1 "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/cpu_of.py" "$out.usage" \
    timeout 120 "$TREC" -q --blocking -o "$out" "$py" "$FIX/trec_basic.py" $PHASE 2>"$out.trec-err" || rc=$?
  [ $rc -eq 0 ] || { cat "$out.trec-err"; echo "trec --blocking exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check basic "$out.txt" "$FIX/trec_basic.py" "$ver" $PHASE "usage=$out.usage,$out.trec-err" || return 1

  # the program's exit status passes through
  rc=0
  timeout 60 "$TREC" -q --blocking -o "$dir/exit.trc" "$py" -c 'import sys; sum(range(10**6)); sys.exit(5)' || rc=$?
  [ $rc -eq 5 ] || { echo "exit status 5 came back as $rc"; return 1; }

  # several threads, busy and sleeping: each one's samples and state
  out="$dir/threads.trc"
  rc=0
  timeout 120 "$TREC" -q --blocking -o "$out" "$py" "$FIX/trec_threads.py" 1.2 || rc=$?
  [ $rc -eq 0 ] || { echo "trec --blocking (threads) exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check threads "$out.txt" "$FIX/trec_threads.py" "$ver" || return 1

  # Ctrl-C (a SIGINT sent to trec is passed on) reaches the program,
  # whose threads trec traces: KeyboardInterrupt, then exit 7
  rc=0
  "$TREC" -q --blocking -o "$dir/int.trc" "$py" -c '
import sys, time
open(sys.argv[1], "w").close()
try:
    while True: sum(range(1000))
except KeyboardInterrupt:
    sys.exit(7)' "$dir/int.ready" &
  local trec=$! i
  for i in $(seq 100); do [ -e "$dir/int.ready" ] && break; sleep 0.1; done
  sleep 0.3
  kill -INT $trec
  wait $trec || rc=$?
  [ $rc -eq 7 ] || { echo "after SIGINT: exit $rc, want 7 (KeyboardInterrupt handled)"; return 1; }

  # --subprocesses: children found and recorded, their exits seen (twice
  # the phase of trec_subprocesses.sh: on a loaded machine a stopped
  # thread waits for trec to get a CPU, and each child must reach its
  # share of samples all the same)
  out="$dir/sub.trc"
  rc=0
  timeout 120 "$TREC" -q --blocking --subprocesses -o "$out" "$py" "$FIX/trec_subproc.py" $SUBPHASE || rc=$?
  [ $rc -eq 0 ] || { echo "trec --blocking --subprocesses exited $rc"; return 1; }
  dump_trace "$out" || return 1
  check subprocesses "$out.txt" "$FIX/trec_subproc.py" "$ver" $SUBPHASE || return 1

  # slowed, not crippled: the program's own timing of a fixed amount of
  # CPU work under --blocking at 1 kHz, against a bare run just before
  local bare slow
  bare=$("$py" "$FIX/bench_cpu.py" 2 | awk '/^elapsed/ {print $2}')
  slow=$(timeout 120 "$TREC" -q --blocking -o "$dir/cpu.trc" "$py" "$FIX/bench_cpu.py" 2 |
    awk '/^elapsed/ {print $2}')
  [ -n "$bare" ] && [ -n "$slow" ] || { echo "bench_cpu.py printed no time"; return 1; }
  "$CHECK_PY" -c "import sys; b, s = float(sys.argv[1]), float(sys.argv[2]); \
sys.exit(0 if s < 3 * b else 'work took %.3f s under --blocking, %.3f s bare' % (s, b))" "$bare" "$slow" ||
    return 1

  # --pid --duration: recorded, then every thread let go of
  local target
  target=$(start_target "$py" "$dir" 8) || { echo "target never got ready"; return 1; }
  out="$dir/att.trc"
  rc=0
  timeout 60 "$TREC" -q --blocking --pid $target --duration 1 -o "$out" || rc=$?
  [ $rc -eq 0 ] || { kill $target; echo "trec --blocking --pid exited $rc"; return 1; }
  not_held $target || { kill $target; return 1; }
  dump_trace "$out" || { kill $target; return 1; }
  check attach "$out.txt" "$FIX/trec_threads.py" "$ver" || { kill $target; return 1; }

  # Ctrl-C (SIGINT) to trec --pid: recording stops, every thread let go of
  rc=0
  "$TREC" -q --blocking --pid $target -o "$dir/int-pid.trc" &
  trec=$!
  sleep 0.7
  kill -INT $trec
  wait $trec || rc=$?
  [ $rc -eq 0 ] || { kill $target; echo "trec --blocking --pid after SIGINT exited $rc"; return 1; }
  not_held $target || { kill $target; return 1; }

  # trec SIGKILLed while it records: the kernel lets go of the threads
  # (one stopped for a read at that moment runs on)
  "$TREC" -q --blocking --pid $target -o "$dir/killed.trc" &
  trec=$!
  sleep 0.7
  kill -KILL $trec
  wait $trec 2>/dev/null
  sleep 0.1
  not_held $target || { kill $target; return 1; }
  kill -0 $target 2>/dev/null || { echo "target died with trec"; return 1; }
  kill $target
  wait $target 2>/dev/null
  return 0
}

# ptrace refused: another tracer (strace) holds the target.  trec must
# say so in one line naming that tracer and exit 2, leaving no trace
# behind.
refused() {
  command -v strace >/dev/null || { echo "no strace to hold the target"; return 77; }
  local py=$1 dir="$TMPD/refused" rc=0
  mkdir -p "$dir"
  local target
  target=$(start_target "$py" "$dir" 8) || { echo "target never got ready"; return 1; }
  strace -f -e trace=none -p "$target" 2>/dev/null &
  local tracer=$! i
  for i in $(seq 50); do
    [ "$(awk '/^TracerPid:/ {print $2}' /proc/$target/status)" != 0 ] && break
    sleep 0.1
  done
  if [ "$(awk '/^TracerPid:/ {print $2}' /proc/$target/status)" = 0 ]; then
    kill $tracer $target
    echo "strace cannot trace here"
    return 77
  fi
  timeout 30 "$TREC" --blocking --pid $target --duration 0.5 -o "$dir/r.trc" 2>"$dir/err" || rc=$?
  kill $tracer
  wait $tracer 2>/dev/null
  kill $target
  wait $target 2>/dev/null
  cat "$dir/err"
  [ $rc -eq 2 ] || { echo "trec exited $rc, want 2"; return 1; }
  [ "$(wc -l <"$dir/err")" -eq 1 ] || { echo "want one line of explanation"; return 1; }
  grep -q "pid $tracer (strace) already traces it" "$dir/err" || { echo "the line does not name the tracer"; return 1; }
  [ ! -e "$dir/r.trc" ] || { echo "a trace was left behind"; return 1; }
}

for_each_python one
rc=0
out="$TMPD/refused.log"
refused "$CHECK_PY" >"$out" 2>&1 || rc=$?
case $rc in
  0) RESULTS="$RESULTS  ok    refused"$'\n' ;;
  77) RESULTS="$RESULTS  skip  refused: $(tail -n1 "$out")"$'\n' ;;
  *) RESULTS="$RESULTS  FAIL  refused"$'\n'; FAILS=$((FAILS + 1)); echo "---- refused failed:"; cat "$out" ;;
esac
finish
