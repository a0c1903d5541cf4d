#!/usr/bin/env bash
# trec --dump --pid: every interpreter found; a main thread blocked in
# wait_here and a thread "spinner-worker" busy in spin_here are both shown,
# by name, at the right lines (tests/e2e/lib/dump_check.py), as text and
# as JSON, in under a second, also while the target is stopped
# (SIGSTOP), which is left running afterwards.  A process that is not
# Python and a pid with no process give one-line errors and exit 2
# (docs/exit-codes.md).
. "$(dirname "$0")/lib/trec_common.sh"

WL="$FIX/dump_target.py"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# timed_dump OUT ERR ARGS...: runs trec --dump ARGS; fails when it takes a
# second or more or exits non-zero.
timed_dump() {
  local out=$1 err=$2 t0 t1 rc=0
  shift 2
  t0=$(now_ms)
  timeout 10 "$TREC" --dump "$@" >"$out" 2>"$err" || rc=$?
  t1=$(now_ms)
  [ $rc -eq 0 ] || { echo "trec --dump $*: exit $rc: $(cat "$err")"; return 1; }
  [ $((t1 - t0)) -lt 1000 ] || { echo "trec --dump $* took $((t1 - t0)) ms"; return 1; }
  echo "trec --dump $*: $((t1 - t0)) ms"
}

one() {
  local py=$1 ver=$2 tag=$3 i d="$TMPD/$3"
  mkdir -p "$d"
  "$py" "$WL" "$d/ready" &
  local target=$!
  for i in $(seq 100); do [ -e "$d/ready" ] && break; sleep 0.1; done
  [ -e "$d/ready" ] || { kill $target; echo "target never got ready"; return 1; }
  sleep 0.2 # from writing READY into time.sleep
  local ok=0
  timed_dump "$d/text" "$d/text.err" --pid $target &&
    timed_dump "$d/json" "$d/json.err" --json --pid $target &&
    "$CHECK_PY" -c 'import json,sys; json.load(sys.stdin)' <"$d/json" &&
    "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/dump_check.py" "$WL" "$d/text" "$d/json" && ok=1
  if [ $ok -eq 1 ]; then
    kill -STOP $target
    ok=0
    timed_dump "$d/stext" "$d/stext.err" --pid $target &&
      timed_dump "$d/sjson" "$d/sjson.err" --json --pid $target &&
      "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/dump_check.py" "$WL" "$d/stext" "$d/sjson" && ok=1
    kill -CONT $target
  fi
  kill $target
  wait $target 2>/dev/null
  [ $ok -eq 1 ] || { echo "---- text:"; cat "$d/text" 2>/dev/null; return 1; }
}

for_each_python one

# --subprocesses: a shell that is not Python leads to the Python process
# it started, found as a recording finds descendants
subs() {
  local d="$TMPD/subs" i rc=0
  mkdir -p "$d"
  bash -c '"$1" "$2" "$3" & wait' sh "$CHECK_PY" "$WL" "$d/ready" &
  local shell=$!
  for i in $(seq 100); do [ -e "$d/ready" ] && break; sleep 0.1; done
  sleep 0.2
  local py
  py=$(cat /proc/$shell/task/*/children 2>/dev/null | tr ' ' '\n' | grep . | head -n1)
  timed_dump "$d/text" "$d/text.err" --subprocesses --pid $shell &&
    timed_dump "$d/json" "$d/json.err" --subprocesses --json --pid $shell &&
    "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/dump_check.py" "$WL" "$d/text" "$d/json" &&
    grep -q "^Process $py: " "$d/text" || rc=1
  [ -n "$py" ] && kill "$py"
  wait $shell 2>/dev/null
  [ $rc -eq 0 ] || { cat "$d/text" "$d/text.err"; return 1; }
}
if subs >"$TMPD/subs.log" 2>&1; then
  RESULTS="$RESULTS  ok    --subprocesses through a shell"$'\n'
else
  fail "--subprocesses through a shell: $(cat "$TMPD/subs.log")"
fi

# errors: one line on stderr, nothing on stdout, exit 2
expect_error() {
  local what=$1 pattern=$2 rc=0
  shift 2
  "$TREC" --dump "$@" >"$TMPD/err.out" 2>"$TMPD/err.txt" || rc=$?
  if [ $rc -ne 2 ]; then
    fail "$what: exit $rc, want 2"
  elif [ -s "$TMPD/err.out" ]; then
    fail "$what: wrote to stdout"
  elif [ "$(wc -l <"$TMPD/err.txt")" -ne 1 ] || ! grep -q "$pattern" "$TMPD/err.txt"; then
    fail "$what: want one line matching '$pattern', got: $(cat "$TMPD/err.txt")"
  else
    RESULTS="$RESULTS  ok    $what: $(cat "$TMPD/err.txt")"$'\n'
  fi
}
sleep 30 &
notpy=$!
expect_error "non-Python pid" "is not a CPython process" --pid $notpy
expect_error "non-Python pid, --json" "is not a CPython process" --json --pid $notpy
kill $notpy
wait $notpy 2>/dev/null
expect_error "missing pid" "no process with pid $notpy" --pid $notpy
expect_error "--dump without --pid" "give --pid" 

# Permission: a process trec may not read gives --dump the very line
# recording gives (exit 2, nothing on stdout): one of another user (trec
# run as nobody), and one of its own user that made itself not dumpable
# (PR_SET_DUMPABLE 0: ptrace and process_vm_readv refused).
same_refusal() {
  local what=$1 victim=$2 rec_rc=0 dump_rc=0
  shift 2
  "$@" "$TREC" -q -o /dev/null --duration 0.2 --pid "$victim" >/dev/null 2>"$TMPD/perm.rec" || rec_rc=$?
  "$@" "$TREC" --dump --pid "$victim" >"$TMPD/perm.out" 2>"$TMPD/perm.dump" || dump_rc=$?
  if [ $rec_rc -ne 2 ] || [ $dump_rc -ne 2 ]; then
    fail "$what: exit $rec_rc recording, $dump_rc --dump; want 2 and 2 ($(cat "$TMPD/perm.dump"))"
  elif [ -s "$TMPD/perm.out" ]; then
    fail "$what: --dump wrote to stdout"
  elif [ "$(wc -l <"$TMPD/perm.dump")" -ne 1 ] || ! cmp -s "$TMPD/perm.rec" "$TMPD/perm.dump" ||
    ! grep -qi "ptrace\|permission\|CAP_SYS_PTRACE" "$TMPD/perm.dump"; then
    fail "$what: recording said '$(cat "$TMPD/perm.rec")', --dump '$(cat "$TMPD/perm.dump")'"
  else
    RESULTS="$RESULTS  ok    $what: as recording: $(cat "$TMPD/perm.dump")"$'\n'
  fi
}
PY1=$(trec_pythons | head -n 1 | cut -d' ' -f1)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -n "$PY1" ]; then
  nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  "$PY1" -c 'import time; time.sleep(30)' &
  victim=$!
  sleep 0.5
  same_refusal "another user's process" $victim "${nobody[@]}"
  kill $victim
  "${nobody[@]}" "$PY1" -c 'import ctypes, time
ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
time.sleep(30)' &
  victim=$!
  # not dumpable once its /proc files turn root's (nobody's before):
  # a loaded machine may take seconds to get the interpreter that far.
  # Only once it runs the interpreter (its command line): setpriv itself
  # is not dumpable for a moment between changing its user and exec'ing
  # (the kernel's rule for a credential change), and exec makes the
  # process dumpable again (a CI run recorded it then, exit 0).
  for i in $(seq 100); do
    tr '\0' ' ' </proc/$victim/cmdline 2>/dev/null | grep -q PR_SET_DUMPABLE &&
      [ "$(stat -c %u /proc/$victim/mem 2>/dev/null)" = 0 ] && break
    sleep 0.1
  done
  same_refusal "a process that is not dumpable" $victim "${nobody[@]}"
  kill $victim
else
  note "not root, no setpriv or no CPython: permission cases not run"
fi
finish
