#!/usr/bin/env bash
# trec's command line and process behaviour (one interpreter suffices):
# --version/--help, usage errors, a program that cannot be started, a
# non-Python program (warned about, run to completion, its status
# passed on), exit status and signal pass-through, "%p" in the output
# name, --pid errors (no such process, not Python, no permission),
# --quiet, and --verbose's layout line on every interpreter, which
# `trc-dump --summary` of the trace must repeat.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

PY=$(echo "$PYTHONS" | head -n1 | cut -d' ' -f1)
T="$TMPD"

expect_rc() { # WANT DESCRIPTION CMD...
  local want=$1 what=$2 rc=0
  shift 2
  "$@" >"$T/out" 2>"$T/err" || rc=$?
  [ $rc -eq "$want" ] || fail "$what: exit $rc, want $want; stderr: $(head -c 400 "$T/err")"
}

# version and help
"$TREC" --version >"$T/v" || fail "--version failed"
grep -q "^trec [0-9]" "$T/v" && grep -q "GPU support:" "$T/v" || fail "--version: $(cat "$T/v")"
"$TREC" -o x.trc --version >"$T/v" && grep -q "GPU support:" "$T/v" || fail "--version after -o"
"$TREC" --help >"$T/h" || fail "--help failed"
grep -q -- "--rate" "$T/h" && grep -q "1 ms" "$T/h" || fail "--help lacks the --rate rationale"

# usage errors
expect_rc 2 "no program" "$TREC" -o "$T/a.trc"
expect_rc 2 "--pid and a program" "$TREC" --pid 1 -o "$T/a.trc" "$PY" -c pass
expect_rc 2 "--rate 0" "$TREC" --rate 0 -o "$T/a.trc" "$PY" -c pass
expect_rc 2 "bad %-sequence" "$TREC" -o "$T/a%q.trc" "$PY" -c pass

# a program that cannot be started: 127, no trace left behind
expect_rc 127 "missing program" "$TREC" -o "$T/missing.trc" -- /nonexistent/program
[ ! -e "$T/missing.trc" ] || fail "a trace was left for a program that never ran"
grep -q "nonexistent/program" "$T/err" || fail "missing program: message $(cat "$T/err")"

# a non-Python program: warned about once, still run, its status passed on
expect_rc 5 "non-Python program" "$TREC" -o "$T/sh.trc" -- sh -c 'sleep 2.5; exit 5'
[ "$(grep -c "warning" "$T/err")" -eq 1 ] || fail "non-Python: want one warning: $(cat "$T/err")"
"$STACKS" "$T/sh.trc" >"$T/sh.txt" || fail "non-Python trace unreadable"
grep -q "^exit	[0-9]*	5	0$" "$T/sh.txt" || fail "non-Python: exit 5 not recorded"

# a Python that ends before its interpreter exists (--version exits
# while reading its configuration): said, not silently an empty trace
expect_rc 0 "python --version" "$TREC" -o "$T/ver.trc" "$PY" --version
grep -q "warning: the program ended before trec could read its interpreter" "$T/err" ||
  fail "python --version: no warning about the empty trace: $(cat "$T/err")"
"$STACKS" "$T/ver.trc" | grep -q "^exit	[0-9]*	0	0$" || fail "python --version: exit 0 not recorded"

# exit status and signals pass through; the trace is complete each time
expect_rc 3 "exit status" "$TREC" -q -o "$T/e.trc" "$PY" -c 'import sys; sys.exit(3)'
[ ! -s "$T/err" ] || fail "--quiet still printed: $(cat "$T/err")"
"$STACKS" "$T/e.trc" | grep -q "^exit	[0-9]*	3	0$" || fail "exit 3 not recorded"
for sig in TERM INT HUP; do
  "$TREC" -q -o "$T/sig.trc" "$PY" -c 'import time; time.sleep(30)' 2>/dev/null &
  pid=$!
  sleep 1
  kill -$sig $pid
  rc=0
  wait $pid || rc=$?
  want=$((128 + $(kill -l $sig)))
  [ $rc -eq $want ] || fail "kill -$sig trec: exit $rc, want $want (signal passed to the program)"
  "$STACKS" "$T/sig.trc" >"$T/sig.txt" && grep -q "^end" "$T/sig.txt" || fail "SIG$sig: trace incomplete"
done

# in a terminal: Ctrl-C reaches the program (not trec, which finishes the
# trace and passes on the program's status), and -o - is refused
cat >"$T/tty_run.py" <<'PYEOF'
import os, pty, sys, time
args, ctrl_c = sys.argv[2:], sys.argv[1] == "ctrl-c"
pid, fd = pty.fork()
if pid == 0:
    os.execv(args[0], args)
out = b""
if ctrl_c:
    time.sleep(1.5)
    os.write(fd, b"\x03")
while True:
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace"))
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
print("status %d" % code)
PYEOF
"$CHECK_PY" "$T/tty_run.py" ctrl-c "$TREC" -o "$T/tty.trc" "$PY" -c \
  'import time
try:
    time.sleep(30)
except KeyboardInterrupt:
    print("program got KeyboardInterrupt")
    raise' >"$T/tty.out" 2>&1
grep -q "program got KeyboardInterrupt" "$T/tty.out" || fail "Ctrl-C did not reach the program: $(cat "$T/tty.out")"
grep -q "^status 130" "$T/tty.out" || fail "Ctrl-C: trec status $(grep status "$T/tty.out"), want 130"
"$STACKS" "$T/tty.trc" >"$T/tty.txt" && grep -q "^end" "$T/tty.txt" || fail "Ctrl-C: trace incomplete"
grep -q "^exit	[0-9]*	0	2$" "$T/tty.txt" || fail "Ctrl-C: program's SIGINT death not recorded"
"$CHECK_PY" "$T/tty_run.py" none "$TREC" -o - "$PY" -c pass >"$T/tty.out" 2>&1
grep -q "^status 2" "$T/tty.out" && grep -q "terminal" "$T/tty.out" || fail "-o - to a terminal: $(cat "$T/tty.out")"

# --duration ends the trace, trec still waits for the program; --rate
rc=0
start=$(date +%s%N)
"$TREC" --duration 0.5 --rate 100 -o "$T/d.trc" "$PY" -c \
  'import time
end = time.time() + 2
while time.time() < end: pass' 2>"$T/err" || rc=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc -eq 0 ] || fail "--duration: exit $rc"
[ $took -ge 1900 ] || fail "--duration: trec returned after $took ms, before the program ended"
n=$(sed -n 's/^trec: \([0-9]*\) samples.*/\1/p' "$T/err")
secs=$(sed -n 's/^trec: .* process, \([0-9.]*\) s,.*/\1/p' "$T/err")
[ -n "$n" ] && [ "$n" -ge 20 ] && [ "$n" -le 60 ] || fail "--rate 100 for 0.5 s: $n samples ($(cat "$T/err"))"
awk "BEGIN{exit !($secs >= 0.45 && $secs < 1.0)}" || fail "--duration 0.5: recorded $secs s"
"$STACKS" "$T/d.trc" >"$T/d.txt" && grep -q "^end" "$T/d.txt" || fail "--duration: trace incomplete"

# --spin: the rate kept with the clock watched; the program's end still
# ends the recording (the spinning wait looks at signals) and is in it
rc=0
"$TREC" --spin --rate 100 -o "$T/s.trc" "$PY" -c \
  'import time
end = time.time() + 0.5
while time.time() < end: pass' 2>"$T/err" || rc=$?
[ $rc -eq 0 ] || fail "--spin: exit $rc"
n=$(sed -n 's/^trec: \([0-9]*\) samples.*/\1/p' "$T/err")
[ -n "$n" ] && [ "$n" -ge 20 ] && [ "$n" -le 80 ] || fail "--spin --rate 100 for 0.5 s: $n samples ($(cat "$T/err"))"
"$STACKS" "$T/s.trc" >"$T/s.txt" && grep -q "^end" "$T/s.txt" || fail "--spin: trace incomplete"
grep -q "^exit	[0-9]*	0	0$" "$T/s.txt" || fail "--spin: the program's end not recorded"

# summary line and %p
rc=0
"$TREC" -o "$T/run-%p.trc" "$PY" -c 'import os; print(os.getpid())' >"$T/pid" 2>"$T/err" || rc=$?
[ $rc -eq 0 ] || fail "%p run: exit $rc"
f="$T/run-$(cat "$T/pid").trc"
[ -s "$f" ] || fail "%p not expanded to the program's pid ($(ls "$T"))"
grep -q "^trec: .* samples, .* written to $f$" "$T/err" || fail "summary line: $(cat "$T/err")"

# --pid errors: no such process, not Python, not allowed
expect_rc 2 "--pid of no process" "$TREC" -o "$T/p.trc" --pid 999999999
expect_rc 2 "--pid of no process (range)" "$TREC" -o "$T/p.trc" --pid 4000000
sleep 20 &
sleeper=$!
expect_rc 2 "--pid of a non-Python process" "$TREC" -o "$T/p.trc" --pid $sleeper
[ -s "$T/err" ] || fail "--pid non-Python: no message"
[ ! -e "$T/p.trc" ] || fail "--pid non-Python left a trace"
kill $sleeper
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
  "$PY" -c 'import time; time.sleep(20)' &
  victim=$!
  sleep 0.5
  expect_rc 2 "--pid without permission" setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$TREC" -o /dev/null --pid $victim
  grep -qi "ptrace\|permission\|CAP_SYS_PTRACE" "$T/err" || fail "permission message: $(cat "$T/err")"
  [ "$(wc -l <"$T/err")" -eq 1 ] || fail "permission message is not one line: $(cat "$T/err")"
  kill $victim
else
  note "not root or no setpriv: permission case not run"
fi

# unsupported interpreters: a warning naming the version, at once
olds=()
pyenv_root=$(trec_pyenv_root) && olds=("$pyenv_root"/versions/{2.7,3.6,3.7}*/bin/python)
for old in "${olds[@]}"; do
  [ -x "$old" ] || continue
  v=$(basename "$(dirname "$(dirname "$old")")")
  t0=$(date +%s%N)
  "$old" -c 'import time; time.sleep(0.2)'
  bare=$(( ($(date +%s%N) - t0) / 1000000 ))
  t0=$(date +%s%N)
  expect_rc 0 "unsupported $v" "$TREC" -o "$T/old.trc" "$old" -c 'import time; time.sleep(0.2)'
  ms=$(( ($(date +%s%N) - t0) / 1000000 - bare ))
  grep -q "runs .*${v%.*}.*does not support.*3.8 or later" "$T/err" ||
    fail "unsupported $v: $(cat "$T/err")"
  # the warning and the summary line, nothing else
  [ "$(grep -vc '^trec: [0-9]* samples' "$T/err")" -eq 1 ] || fail "unsupported $v: not one line: $(cat "$T/err")"
  # the old workaround retried for 2 s before saying so; measured against
  # the same program run bare just before, so a slow start does not count
  [ "$ms" -lt 1500 ] || fail "unsupported $v: took $ms ms longer than the program alone ($bare ms)"
done

# --verbose: each interpreter says where its layout came from, the
# generated table of its minor version before 3.13, its own
# _Py_DebugOffsets from 3.13 on; --quiet silences it
while read -r vpy vver; do
  [ -n "$vpy" ] || continue
  minor=${vver%.*}
  expect_rc 0 "--verbose on $vver" "$TREC" -v -o "$T/verbose.trc" -- "$vpy" -c pass
  case $minor in
    3.8|3.9|3.10|3.11|3.12) want="CPython $vver, layout from the $minor\.[0-9]+ headers" ;;
    *) # a free-threaded build says so, and whether its GIL was on
      ft=$("$vpy" -c 'import sysconfig; print(sysconfig.get_config_var("Py_GIL_DISABLED") or 0)')
      case $ft in 1) build=", free-threaded, (no GIL|GIL enabled)" ;; *) build="" ;; esac
      want="CPython $vver, layout from _Py_DebugOffsets \($minor list(, from $minor\.[0-9a-z]+)?$build\)" ;;
  esac
  grep -Eq "^trec: pid [0-9]+ \(.*\): $want\$" "$T/err" || fail "--verbose on $vver: want '$want', got: $(head -c 300 "$T/err")"
  # the trace keeps the same words (PROCESS layout, spec §7.5), and
  # trc-dump --summary names them on that pid's line
  vline=$(grep -E "^trec: pid [0-9]+ \(.*\): CPython " "$T/err" | head -n1)
  vpid=${vline#trec: pid }
  vpid=${vpid%% *}
  vlayout=${vline##*, layout from }
  "$BIN/trc-dump" --summary "$T/verbose.trc" >"$T/summary" 2>&1 || fail "trc-dump --summary on $vver: $(head -c 300 "$T/summary")"
  grep -E "^  pid $vpid \"" "$T/summary" | grep -qF "\": interpreter \"CPython $vver\", layout \"$vlayout\"" ||
    fail "trc-dump --summary on $vver: want layout '$vlayout' for pid $vpid, got: $(grep -A3 '^processes:' "$T/summary" | head -c 400)"
done <<<"$PYTHONS"
expect_rc 0 "--verbose --quiet" "$TREC" -v -q -o "$T/verbose.trc" -- "$PY" -c pass
[ ! -s "$T/err" ] || fail "--verbose --quiet printed: $(head -c 200 "$T/err")"

finish
