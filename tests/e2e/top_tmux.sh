#!/usr/bin/env bash
# trc-top as a person uses it, under tmux: `trc-top -- python3
# top_switch.py CUE` on a 160x40 terminal; the top row is alpha, then,
# once CUE exists, beta (the program switches on cue and the 1 s window
# follows); the keys sort (2: total, the top row is <module>) and toggle
# (i wall, g GIL only, w since start) as the header says; q stops the
# program (exit status 143, its SIGTERM: tests/e2e/top_tmux_exit.sh has
# the rest of how trc-top ends), leaves the alternate screen and gives
# the terminal back (stty: echo and icanon on again); so does Ctrl-C.  The screen refreshes
# at least 8 times a second as the terminal shows it (the redraw number
# TRC_TOP_FRAMES=1 paints, read twice by capture-pane; 10 is the aim, 8
# leaves room for this loaded machine), and what the program writes at
# the cue (stdout, and stderr after a cursor-home escape) shows only as
# the header's "output:" line.  Skips (77) without tmux.
# retry-once: records a live program against the clock (tests/run-all)
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
session=top$$
tm() { tmux -S "$sock" "$@"; }
cleanup() { tm kill-server 2> /dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

# The pane runs trc-top, then records its status and the terminal's modes.
cmd="TRC_TOP_FRAMES=1 TERM=xterm-256color $PWD/$BIN/trc-top --window 1 -- $py $PWD/fixtures/workloads/top_switch.py $tmp/cue 40;"
cmd+=" echo \$? > $tmp/status; stty -a > $tmp/stty; echo TOP-DONE; sleep 60"
tm new-session -d -x 160 -y 40 -s "$session" "$cmd"

screen() { tm capture-pane -p -t "$session"; }
# The function of the first row under the column titles.
top_row() { screen | awk '/%Own/ { getline; print; exit }' | sed -E 's/^ *([0-9.]+% +){2}[0-9.]+s +[0-9.]+s +//; s/ \(.*//'; }
# wait_for SECONDS WHAT CMD...: until CMD succeeds; FAIL with the screen.
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

wait_for 15 "alpha on the top row" row_is alpha
echo "top row: alpha"

# The refresh rate as the terminal sees it: redraws numbered on screen.
frame_now() { screen | grep -oE 'frame [0-9]+' | tail -n 1 | cut -d' ' -f2; }
f0=$(frame_now) t0=$(date +%s%N)
sleep 3
f1=$(frame_now) t1=$(date +%s%N)
[ -n "$f0" ] && [ -n "$f1" ] || { echo "FAIL: no redraw number on the screen (TRC_TOP_FRAMES=1)"; screen; exit 1; }
hz=$(awk -v f="$((f1 - f0))" -v ns="$((t1 - t0))" 'BEGIN { printf "%.1f", f / (ns / 1e9) }')
awk -v hz="$hz" 'BEGIN { exit !(hz >= 8) }' ||
  { echo "FAIL: the screen refreshed $hz times a second (frames $f0 -> $f1), want >= 8"; exit 1; }
echo "refresh: $hz Hz on the terminal"

touch "$tmp/cue"
wait_for 8 "beta on the top row after the cue" row_is beta
echo "top row after the cue: beta"
output_shown() { screen | sed -n 2p | grep -qx 'output:  *top_switch: cue seen, now in beta'; }
wait_for 3 "the program's stderr as the output line" output_shown
header_first() { screen | head -n 1 | grep -q '^trc-top: '; }
header_first || { echo "FAIL: the program's output moved the header"; screen; exit 1; }
[ "$(screen | grep -c 'top_switch:')" = 1 ] ||
  { echo "FAIL: the program's output reached the screen outside the output line"; screen; exit 1; }
echo "program output: only the header's output line"
tm send-keys -t "$session" 2
wait_for 3 "sort by total after key 2" header_has "sort total %"
wait_for 3 "<module> on top by total" row_is "<module>"
tm send-keys -t "$session" i
wait_for 3 "the wall view after key i" header_has "wall (idle too)"
tm send-keys -t "$session" g
wait_for 3 "GIL only after key g" header_has "GIL only"
tm send-keys -t "$session" w
wait_for 3 "since start after key w" header_has "since start"
tm send-keys -t "$session" 6
wait_for 3 "sort by name after key 6" header_has "sort name"
echo "keys: 2 i g w 6 change the view"
tm send-keys -t "$session" q
wait_for 10 "trc-top to exit on q" test -s "$tmp/status"
[ "$(cat "$tmp/status")" = 143 ] || { echo "FAIL: trc-top exited $(cat "$tmp/status") on q, want 143"; screen; exit 1; }
wait_for 5 "the shell's line after trc-top" sh -c "tmux -S '$sock' capture-pane -p -t '$session' | grep -q TOP-DONE"
[ "$(tm display-message -p -t "$session" '#{alternate_on}')" = 0 ] ||
  { echo "FAIL: the terminal is still on the alternate screen after q"; exit 1; }
! screen | grep -q '%Own' || { echo "FAIL: the table is still on the screen after q"; screen; exit 1; }
grep -qE '(^| )echo( |$)' "$tmp/stty" && grep -qE '(^| )icanon( |$)' "$tmp/stty" ||
  { echo "FAIL: echo/icanon not restored after q:"; cat "$tmp/stty"; exit 1; }
echo "q: exit 143 (the program stopped), terminal restored"

# Ctrl-C leaves as cleanly as q.
rm -f "$tmp/status" "$tmp/stty" "$tmp/cue"
tm kill-session -t "$session"
tm new-session -d -x 160 -y 40 -s "$session" "$cmd"
wait_for 15 "a table on the screen" row_is alpha
tm send-keys -t "$session" C-c
wait_for 10 "trc-top to exit on Ctrl-C" test -s "$tmp/status"
[ "$(cat "$tmp/status")" = 143 ] || { echo "FAIL: trc-top exited $(cat "$tmp/status") on Ctrl-C, want 143"; exit 1; }
wait_for 5 "the shell's line after trc-top" sh -c "tmux -S '$sock' capture-pane -p -t '$session' | grep -q TOP-DONE"
[ "$(tm display-message -p -t "$session" '#{alternate_on}')" = 0 ] ||
  { echo "FAIL: the terminal is still on the alternate screen after Ctrl-C"; exit 1; }
grep -qE '(^| )echo( |$)' "$tmp/stty" && grep -qE '(^| )icanon( |$)' "$tmp/stty" ||
  { echo "FAIL: echo/icanon not restored after Ctrl-C:"; cat "$tmp/stty"; exit 1; }
echo "Ctrl-C: exit 143 (the program stopped), terminal restored"
echo ok
