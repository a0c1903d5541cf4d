#!/usr/bin/env bash
# How trc-top ends, as a person sees it under tmux (160x40):
# 1. `trc-top -- PROGRAM` where the program prints on stdout and stderr
#    and ends on its own: the screen stays (the header says the input
#    ended) until q, then the terminal is given back and shows what the
#    program printed, all of it; trc-top exits with the program's status, 0.
# 2. q while that program still runs stops it (SIGTERM, passed on by
#    trec): the program is gone, trc-top exits 143 (128 + SIGTERM), and
#    what it printed so far is shown.
# 3. `trc-top --pid PID`: q ends the recording only; the process runs on
#    and trc-top exits 0.
# Skips (77) without tmux.
# retry-once: records live programs against the clock (tests/run-all)
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BIN=${BIN:-bin}
command -v tmux > /dev/null || { echo "skip: tmux not installed (scripts/install-deps)"; exit 77; }
[ -x "$BIN/trc-top" ] && [ -x "$BIN/trec" ] || { echo "FAIL: $BIN/trc-top or $BIN/trec not built"; exit 1; }
. tests/e2e/lib/pythons.sh
py=$(trec_pythons | head -n 1 | cut -d' ' -f1)
[ -n "$py" ] || { echo "skip: no CPython 3.8+ found"; exit 77; }

tmp=$(mktemp -d)
sock="$tmp/tmux.sock"
session=topx$$
target=
tm() { tmux -S "$sock" "$@"; }
cleanup() {
  tm kill-server 2> /dev/null
  [ -n "$target" ] && kill "$target" 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Spins in spin() for argv[1] seconds; prints a line on stdout and one on
# stderr at the start, one more at the end.  argv[2] tells runs apart;
# its pid goes to argv[2].pid beside this file.
cat > "$tmp/printer.py" <<'PY'
import os
import sys
import time
with open(os.path.join(os.path.dirname(__file__), sys.argv[2] + ".pid"), "w") as f:
    f.write(str(os.getpid()))
def spin():
    x = 0
    for i in range(20000):
        x += i
    return x
print("printer %s: said on stdout" % sys.argv[2], flush=True)
print("printer %s: said on stderr" % sys.argv[2], file=sys.stderr, flush=True)
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    spin()
print("printer %s: done" % sys.argv[2], flush=True)
PY

screen() { tm capture-pane -p -t "$session"; }
top_row() { screen | awk '/%Own/ { getline; print; exit }' | sed -E 's/^ *([0-9.]+% +){2}[0-9.]+s +[0-9.]+s +//; s/ \(.*//'; }
wait_for() {
  local limit=$1 what=$2 i
  shift 2
  for ((i = 0; i < limit * 10; i++)); do
    "$@" && return 0
    sleep 0.1
  done
  echo "FAIL: $what within ${limit}s; the screen:"
  screen
  exit 1
}
row_is() { [ "$(top_row)" = "$1" ]; }
header_has() { screen | head -n 1 | grep -qF -- "$1"; }
shown() { screen | grep -qxF -- "$1"; }
# start CMD...: trc-top in a fresh session; the pane records its status.
start() {
  rm -f "$tmp/status"
  tm kill-session -t "$session" 2> /dev/null
  tm new-session -d -x 160 -y 40 -s "$session" \
    "TERM=xterm-256color $*; echo \$? > $tmp/status; echo TOP-DONE; sleep 60"
}
quit() {
  tm send-keys -t "$session" q
  wait_for 15 "trc-top to exit on q" test -s "$tmp/status"
  wait_for 5 "the shell's line after trc-top" shown TOP-DONE
  [ "$(tm display-message -p -t "$session" '#{alternate_on}')" = 0 ] ||
    fail "the terminal is still on the alternate screen after q"
  ! screen | grep -q '%Own' || { screen; fail "the table is still on the screen after q"; }
}

# 1. The program ends on its own.
start "$PWD/$BIN/trc-top -- $py $tmp/printer.py 2 ended"
wait_for 15 "spin on the top row" row_is spin
! screen | grep -q 'said on stdout' || { screen; fail "the program's stdout reached the screen"; }
wait_for 15 "the header saying the input ended" header_has "input ended"
sleep 0.3
quit
[ "$(cat "$tmp/status")" = 0 ] || { screen; fail "trc-top exited $(cat "$tmp/status") after the program ended well"; }
for line in "printer ended: said on stdout" "printer ended: said on stderr" "printer ended: done"; do
  shown "$line" || { screen; fail "after q the terminal does not show the program's '$line'"; }
done
echo "program ended: after q the terminal shows its 3 lines, exit 0"

# 2. q while the program runs stops it.
start "$PWD/$BIN/trc-top -- $py $tmp/printer.py 60 stopped"
wait_for 15 "spin on the top row" row_is spin
prog=$(cat "$tmp/stopped.pid")
kill -0 "$prog" 2> /dev/null || fail "the program is not running before q"
quit
[ "$(cat "$tmp/status")" = 143 ] ||
  { screen; fail "trc-top exited $(cat "$tmp/status") after q stopped the program, want 143 (SIGTERM)"; }
wait_for 3 "the program to be gone after q" sh -c "! kill -0 $prog 2> /dev/null"
for line in "printer stopped: said on stdout" "printer stopped: said on stderr"; do
  shown "$line" || { screen; fail "after q the terminal does not show the program's '$line'"; }
done
! screen | grep -q "printer stopped: done" || { screen; fail "the program ran to its end despite q"; }
! screen | grep -q "KeyboardInterrupt" || { screen; fail "q interrupted the program (SIGINT), want SIGTERM"; }
echo "q: the program stopped, exit 143, its lines shown"

# 3. --pid: q leaves the process running.
"$py" "$tmp/printer.py" 60 attached > /dev/null 2>&1 &
target=$!
start "$PWD/$BIN/trc-top --pid $target"
wait_for 15 "spin on the top row" row_is spin
quit
[ "$(cat "$tmp/status")" = 0 ] || { screen; fail "trc-top --pid exited $(cat "$tmp/status") on q"; }
sleep 0.5
kill -0 "$target" 2> /dev/null || fail "--pid: the process did not survive q"
echo "--pid: q ends the view, the process runs on, exit 0"
echo ok
