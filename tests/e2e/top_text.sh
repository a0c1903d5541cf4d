#!/usr/bin/env bash
# trc-top's text snapshots and inputs: --once on a recorded trace gives
# exactly the rows that trc2collapsed's folded stacks give when counted
# independently (lib/top_check.py; on-CPU, --idle, --gil, and --threads/
# --pids as the converters' --thread/--pid); a GPU trace
# has its device line, GPU column and the share of GPU time with a
# Python line (trc-stats --gpu's line; on a two-device trace each
# device's on a line of its own, the construction's figures); a trace piped
# from trec, a file read with --follow while trec writes it (or created
# after trc-top started: waited for, at most --wait seconds) and a process
# attached with --pid each show the program's hot function on top (and
# --pid leaves the process running); bad input is one line naming the
# file, exit 2, nothing on stdout; --pids matching nothing exits 1.
# retry-once: records live programs against the clock (tests/run-all)
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BIN=${BIN:-bin} BUILD=${BUILD:-build}
top=$BIN/trc-top
gen=$BUILD/tests/conv-gen
[ -x "$top" ] && [ -x "$BIN/trec" ] && [ -x "$gen" ] ||
  { echo "FAIL: $top, $BIN/trec or $gen not built (make all $gen)"; exit 1; }
. tests/e2e/lib/pythons.sh
py=$(trec_pythons | head -n 1 | cut -d' ' -f1)
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
first_row() { awk '/%Own/ { getline; print; exit }' "$1" | sed -E 's/^ *([0-9.]+% +){2}[0-9.]+s +[0-9.]+s +//; s/ \(.*//'; }

# 1. --once against an independent count of trc2collapsed's output.
"$gen" fixture "$tmp/fx.trc" > /dev/null || fail "conv-gen fixture"
for sel in "" --idle --gil; do
  "$top" --once --since-start --rows 0 $sel "$tmp/fx.trc" > "$tmp/top.txt" || fail "trc-top --once $sel exited $?"
  "$BIN/trc2collapsed" $sel "$tmp/fx.trc" > "$tmp/n.folded" || fail "trc2collapsed $sel"
  "$BIN/trc2collapsed" $sel --weight us "$tmp/fx.trc" > "$tmp/us.folded" || fail "trc2collapsed --weight us $sel"
  python3 tests/e2e/lib/top_check.py "$tmp/top.txt" "$tmp/n.folded" "$tmp/us.folded" ||
    { cat "$tmp/top.txt"; fail "trc-top --once ${sel:-(on-CPU)} differs from trc2collapsed"; }
  echo "--once ${sel:-(on-CPU)}: rows as trc2collapsed counts them"
done
# the filters keep what the converters' --thread and --pid keep
for f in "--threads MainThread:--thread MainThread" "--threads w2:--thread w2" \
  "--pids 200:--pid 200" "--pids app.py --threads MainThread:--pid app.py --thread MainThread"; do
  mine=${f%%:*} theirs=${f#*:}
  "$top" --once --since-start --rows 0 $mine "$tmp/fx.trc" > "$tmp/top.txt" || fail "trc-top --once $mine exited $?"
  "$BIN/trc2collapsed" $theirs "$tmp/fx.trc" > "$tmp/n.folded" || fail "trc2collapsed $theirs"
  "$BIN/trc2collapsed" $theirs --weight us "$tmp/fx.trc" > "$tmp/us.folded" || fail "trc2collapsed --weight us $theirs"
  python3 tests/e2e/lib/top_check.py "$tmp/top.txt" "$tmp/n.folded" "$tmp/us.folded" ||
    { cat "$tmp/top.txt"; fail "trc-top --once $mine differs from trc2collapsed $theirs"; }
  echo "--once $mine: rows as trc2collapsed $theirs counts them"
done
"$top" --once --sort total --rows 1 "$tmp/fx.trc" > "$tmp/total.txt"
[ "$(first_row "$tmp/total.txt")" = "<module>" ] || { cat "$tmp/total.txt"; fail "--sort total: <module> not on top"; }

# GPU data: a header line per device and the GPU time column (the
# figures themselves: tests/unit/export/top/test_top.c).
"$top" --once --since-start --sort gpu fixtures/gpu/fake_train.trc > "$tmp/gpu.txt" || fail "GPU trace: exit $?"
grep -qE '^GPU 0: busy +[0-9.]+ %' "$tmp/gpu.txt" && grep -q 'GPUTime' "$tmp/gpu.txt" ||
  { cat "$tmp/gpu.txt"; fail "GPU trace: no device line or no GPUTime column"; }
echo "GPU trace: device line and GPUTime column"
# The share of GPU time with a Python line: trc-stats --gpu's very line,
# in the header of any view (it counts since the start).
share=$("$BIN/trc-stats" --gpu fixtures/gpu/fake_train.trc 2> /dev/null | grep '% of GPU time has a Python line')
[ -n "$share" ] || fail "trc-stats --gpu printed no share line"
"$top" --once fixtures/gpu/fake_train.trc > "$tmp/gpu_window.txt" || fail "GPU trace (window): exit $?"
for f in gpu gpu_window; do
  [ "$(grep '^GPU lines: ' "$tmp/$f.txt")" = "GPU lines: $share" ] ||
    { cat "$tmp/$f.txt"; fail "GPU trace: the header's GPU lines differ from trc-stats --gpu's '$share'"; }
done
echo "GPU trace: GPU lines as trc-stats --gpu says: $share"
# Two devices (tests/support/nvvp_traces.h, two-devices): the share of
# each follows on a line of its own, the figures those of the
# construction (device 0: 1000 us direct, 300 us via a waiting thread;
# device 1: 200 us direct, 600 us via, 200 us with no launch call), and
# the lines joined are trc-stats --gpu's one line.
nvgen=$BUILD/tests/nvvp-gen
if [ -x "$nvgen" ]; then
  "$nvgen" --write two-devices "$tmp/two.trc" > /dev/null || fail "nvvp-gen two-devices"
  "$top" --once --since-start --sort gpu "$tmp/two.trc" > "$tmp/two.txt" 2> /dev/null || fail "two devices: exit $?"
  cat > "$tmp/two.want" <<'EOF'
GPU lines: 91.30% of GPU time has a Python line (direct 52.17%, via a waiting thread 39.13%, none 8.70%)
GPU lines: device 0: 100.00% (direct 76.92%, via a waiting thread 23.08%, none 0.00%)
GPU lines: device 1: 80.00% (direct 20.00%, via a waiting thread 60.00%, none 20.00%)
EOF
  grep '^GPU lines: ' "$tmp/two.txt" | diff "$tmp/two.want" - ||
    { cat "$tmp/two.txt"; fail "two devices: GPU lines"; }
  joined=$(grep '^GPU lines: ' "$tmp/two.txt" | sed 's/^GPU lines: //' | awk '{ printf "%s%s", (NR > 1 ? "; " : ""), $0 }')
  share2=$("$BIN/trc-stats" --gpu "$tmp/two.trc" 2> /dev/null | grep '% of GPU time has a Python line')
  [ "$joined" = "$share2" ] || fail "two devices: GPU lines joined '$joined', trc-stats --gpu says '$share2'"
  grep -q '^GPU 0: busy' "$tmp/two.txt" && grep -q '^GPU 1: busy' "$tmp/two.txt" ||
    { cat "$tmp/two.txt"; fail "two devices: a device line missing"; }
  echo "two devices: GPU lines per device"
else
  echo "note: $nvgen not built; two-device case skipped"
fi

# 2. Bad input: one line naming the file, exit 2, no output.
rc=0
"$top" --once README.md > "$tmp/bad.out" 2> "$tmp/bad.err" || rc=$?
[ $rc = 2 ] || fail "not a trace: exit $rc, want 2"
[ ! -s "$tmp/bad.out" ] || fail "not a trace: something on stdout"
[ "$(wc -l < "$tmp/bad.err")" = 1 ] && grep -q "^trc-top: error: README.md: .*not a .trc file" "$tmp/bad.err" ||
  { cat "$tmp/bad.err"; fail "not a trace: want one line naming README.md"; }
rc=0
"$top" --once --pids 999999 "$tmp/fx.trc" > "$tmp/nomatch.out" 2> "$tmp/nomatch.err" || rc=$?
[ $rc = 1 ] && grep -q "^trc-top: error: --pids '999999' matches no process" "$tmp/nomatch.err" ||
  { cat "$tmp/nomatch.err"; fail "--pids matching nothing: exit $rc, want 1 and a line naming --pids"; }
[ ! -s "$tmp/nomatch.out" ] || fail "--pids matching nothing: something on stdout"
echo "bad input: exit 2, one line; --pids matching nothing: exit 1"

[ -n "$py" ] || { echo "skip (the live inputs): no CPython 3.8+ found"; echo ok; exit 0; }
prog=fixtures/workloads/top_switch.py

# 3. A pipe from trec: the snapshot at the end of the input.
"$BIN/trec" -q -o - "$py" "$prog" "$tmp/nocue" 1.5 2> /dev/null | "$top" --once > "$tmp/pipe.txt" ||
  fail "trec | trc-top exited $?"
[ "$(first_row "$tmp/pipe.txt")" = alpha ] || { cat "$tmp/pipe.txt"; fail "pipe: alpha not on top"; }
grep -q "input ended" "$tmp/pipe.txt" || fail "pipe: the header does not say the input ended"
echo "trec -o - | trc-top --once: alpha on top"

# 4. --follow on a file trec is writing: the snapshot while it grows.
"$BIN/trec" -q -o "$tmp/live.trc" "$py" "$prog" "$tmp/nocue" 6 2> /dev/null &
pids+=($!)
for ((i = 0; i < 100; i++)); do [ -s "$tmp/live.trc" ] && break; sleep 0.05; done
"$top" --follow "$tmp/live.trc" --once --interval 2.5 > "$tmp/follow.txt" || fail "--follow exited $?"
[ "$(first_row "$tmp/follow.txt")" = alpha ] || { cat "$tmp/follow.txt"; fail "--follow: alpha not on top"; }
grep -q " - reading" "$tmp/follow.txt" || { cat "$tmp/follow.txt"; fail "--follow: the header does not say it is still reading"; }
echo "--follow: alpha on top while trec writes"

# 4b. --follow on a file not created yet waits for it; --wait bounds that.
"$top" --follow "$tmp/later.trc" --once --interval 4 > "$tmp/later.txt" 2> "$tmp/later.err" &
later=$!
pids+=($later)
sleep 1
kill -0 $later 2> /dev/null || { cat "$tmp/later.err"; fail "--follow of a file not there yet did not wait"; }
"$BIN/trec" -q -o "$tmp/later.trc" "$py" "$prog" "$tmp/nocue" 6 2> /dev/null &
pids+=($!)
wait $later || { cat "$tmp/later.err"; fail "--follow of a file created later exited $?"; }
[ "$(first_row "$tmp/later.txt")" = alpha ] || { cat "$tmp/later.txt" "$tmp/later.err"; fail "--follow, file created later: alpha not on top"; }
echo "--follow: waits for the file to be created, then alpha on top"
"$top" --follow "$tmp/never.trc" --interval 0.3 > "$tmp/int.out" 2> "$tmp/int.err" &
intr=$!
sleep 1
kill -INT $intr
rc=0
wait $intr || rc=$?
[ $rc -eq 0 ] && [ ! -s "$tmp/int.err" ] && grep -q "waiting for $tmp/never.trc to be created" "$tmp/int.out" ||
  { cat "$tmp/int.out" "$tmp/int.err"; fail "Ctrl-C while waiting for the file: exit $rc"; }
echo "--follow: the header says it waits; Ctrl-C then ends it quietly, exit 0"
rc=0
t0=$(date +%s%N)
"$top" --follow "$tmp/never.trc" --once --wait 0.5 > "$tmp/never.out" 2> "$tmp/never.err" || rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
[ $rc -eq 2 ] && [ ! -s "$tmp/never.out" ] && [ "$(wc -l < "$tmp/never.err")" -eq 1 ] &&
  grep -q "never.trc: not created within the --wait time" "$tmp/never.err" ||
  { cat "$tmp/never.out" "$tmp/never.err"; fail "--wait 0.5 on a file never created: exit $rc"; }
[ $ms -ge 450 ] && [ $ms -lt 5000 ] || fail "--wait 0.5 gave up after $ms ms"
rc=0
"$top" --wait 1 "$tmp/fx.trc" > /dev/null 2> "$tmp/wait.err" || rc=$?
[ $rc -eq 2 ] && grep -q -- "--wait goes with --follow" "$tmp/wait.err" || fail "--wait without --follow: exit $rc"
echo "--wait: gives up after it with one line naming the file, exit 2"

# 5. --pid: trc-top runs trec --pid; the process runs on afterwards.
"$py" "$prog" "$tmp/cue" 20 > /dev/null 2>&1 &
target=$!
pids+=($target)
touch "$tmp/cue"
sleep 0.5
"$top" --pid $target --once --interval 2 > "$tmp/pid.txt" || fail "--pid exited $?"
[ "$(first_row "$tmp/pid.txt")" = beta ] || { cat "$tmp/pid.txt"; fail "--pid: beta not on top"; }
sleep 0.3
kill -0 $target 2> /dev/null || fail "--pid: the process did not survive trc-top"
echo "--pid: beta on top, the process still runs"
echo ok
