#!/usr/bin/env bash
# Bad input and bad output for trc2collapsed, trc-stats and trc2pstats:
#  - missing file, not a trace: exit 2, ONE error line naming the file, no output file;
#  - truncated or damaged trace, recorded loss with --strict: exit 1, the
#    readable part written, ONE warning line saying what was lost;
#  - a few recorded losses without --strict (a short run): exit 0, silent;
#  - every case of fixtures/invalid/CASES: the exit status listed there;
#  - -o into a missing directory, a failure after the output was opened,
#    a full stdout, binary output to a terminal: exit 2, no file left.
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/conv-gen
. tests/e2e/lib/converters.sh
tools=("${TRC_FOLDED_CONVERTERS[@]}")
for f in "$gen" "${tools[@]/#/$BIN/}"; do [ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }; done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

read -r _ _ _ on_cpu _ _ _ _ _ _ < <("$gen" lossy "$tmp/lossy.trc") || { echo "FAIL: generator"; exit 1; }
# 200000 samples: several chunks of the default size (256 KiB), so a cut or a
# flipped byte leaves whole chunks to read
"$gen" big 200000 "$tmp/big.trc" > /dev/null || { echo "FAIL: generator (big)"; exit 1; }
size=$(stat -c %s "$tmp/big.trc")
head -c $((size * 2 / 3)) "$tmp/big.trc" > "$tmp/cut.trc"
# flip one byte in the middle of the file (inside some chunk's payload)
python3 - "$tmp/big.trc" "$tmp/flip.trc" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0x40
open(sys.argv[2], "wb").write(b)
EOF
printf 'this is not a trace at all\n' > "$tmp/text.trc"
: > "$tmp/empty.trc"

# run TOOL ARGS...: stdout to $tmp/out, stderr to $tmp/err, exit in $rc (pstats gets -o)
run() {
  local t=$1; shift
  rm -f "$tmp/out" "$tmp/err"
  if [ "$t" = trc2pstats ]; then "$BIN/$t" -o "$tmp/out" "$@" 2> "$tmp/err"
  else "$BIN/$t" "$@" > "$tmp/out" 2> "$tmp/err"; fi
  rc=$?
}
lines() { wc -l < "$1" | tr -d ' '; }

for t in "${tools[@]}"; do
  # unusable input: exit 2, one error line naming the file, no pstats file
  for f in "$tmp/missing.trc" "$tmp/text.trc" "$tmp/empty.trc"; do
    run "$t" "$f"
    [ $rc -eq 2 ] || bad "$t $(basename "$f"): exit $rc, want 2"
    [ "$(lines "$tmp/err")" -eq 1 ] || { bad "$t $(basename "$f"): want one stderr line:"; cat "$tmp/err"; }
    grep -q "^$t: error: .*$(basename "$f")" "$tmp/err" || bad "$t $(basename "$f"): error does not name the file: $(cat "$tmp/err")"
    if [ "$t" = trc2pstats ]; then [ ! -e "$tmp/out" ] || bad "$t left an output file for $(basename "$f")"
    else [ ! -s "$tmp/out" ] || bad "$t wrote output for $(basename "$f")"; fi
  done
  # damaged input, recorded loss with --strict: exit 1, partial output, exactly one warning
  for f in "$tmp/cut.trc" "$tmp/flip.trc" "--strict $tmp/lossy.trc"; do
    # shellcheck disable=SC2086  # "--strict FILE" splits on purpose
    run "$t" $f
    [ $rc -eq 1 ] || bad "$t $(basename "$f"): exit $rc, want 1"
    [ -s "$tmp/out" ] || bad "$t $(basename "$f"): no partial output"
    [ "$(lines "$tmp/err")" -eq 1 ] && grep -q "^$t: warning: " "$tmp/err" ||
      { bad "$t $(basename "$f"): want exactly one warning line:"; cat "$tmp/err"; }
  done
  # the same recorded loss without --strict: 6 of 32 ticks, too short a run
  # for a share to mean anything (docs/exit-codes.md): no warning, exit 0
  run "$t" "$tmp/lossy.trc"
  [ $rc -eq 0 ] && [ ! -s "$tmp/err" ] || bad "$t lossy.trc without --strict: exit $rc: $(cat "$tmp/err")"
  ls -A "$tmp" | grep -q '^\.' && bad "$t left a temp file"  # hidden .NAME.XXXXXX
done

# what the warnings say, and that partial output is really partial
run trc2collapsed --strict "$tmp/lossy.trc"
grep -q '5 samples missed by the recorder, 1 invalid sample dropped' "$tmp/err" || bad "lossy warning: $(cat "$tmp/err")"
[ "$(awk '{s+=$NF} END {print s}' "$tmp/out")" -eq "$on_cpu" ] || bad "lossy: output should still hold every written sample"
run trc2collapsed "$tmp/cut.trc"; cut_sum=$(awk '{s+=$NF} END {print s}' "$tmp/out")
run trc2collapsed "$tmp/big.trc"; full_sum=$(awk '{s+=$NF} END {print s}' "$tmp/out")
[ $rc -eq 0 ] || bad "intact big trace: exit $rc"
[ "$cut_sum" -gt 0 ] && [ "$cut_sum" -lt "$full_sum" ] || bad "cut trace sum $cut_sum not in (0, $full_sum)"
run trc-stats "$tmp/cut.trc"
grep -q '^loss: .*truncated' "$tmp/out" || bad "trc-stats header does not report the truncation"

# the shared invalid fixtures, with the exit status their CASES list gives
if [ -f fixtures/invalid/CASES ]; then
  while read -r name want _; do
    case $name in ''|'#'*) continue ;; segment_end_mismatch) continue ;; esac  # only --check sees that one
    for t in "${tools[@]}"; do
      run "$t" --idle "fixtures/invalid/$name.trc"
      [ "$t" = trc2pstats ] && [ $rc -eq 2 ] && grep -q 'no samples selected' "$tmp/err" && continue
      [ $rc -eq "$want" ] || bad "$t $name.trc: exit $rc, want $want ($(head -c 200 "$tmp/err"))"
      [ "$(lines "$tmp/err")" -eq 1 ] || { bad "$t $name.trc: want one stderr line, got:"; head -n 5 "$tmp/err"; }
    done
  done < fixtures/invalid/CASES
fi

# output problems
mkdir "$tmp/outdir"
for t in "${tools[@]}"; do
  "$BIN/$t" -o "$tmp/no/such/dir/out" "$tmp/big.trc" 2> "$tmp/err"; rc=$?
  [ $rc -eq 2 ] || bad "$t -o into a missing dir: exit $rc"
  grep -q "no/such/dir/out" "$tmp/err" || bad "$t: error does not name the output: $(cat "$tmp/err")"
  # nothing selected for pstats; an unusable input for all: no file, no temp file
  "$BIN/$t" -o "$tmp/outdir/x" "$tmp/text.trc" 2> /dev/null; rc=$?
  [ $rc -eq 2 ] || bad "$t bad input with -o: exit $rc"
  [ -z "$(ls -A "$tmp/outdir")" ] || bad "$t left files in the output dir: $(ls -A "$tmp/outdir")"
  "$BIN/$t" "$tmp/big.trc" > /dev/full 2> "$tmp/err"; rc=$?
  [ $rc -eq 2 ] || bad "$t to a full stdout: exit $rc"
  grep -q "write failed" "$tmp/err" || bad "$t to a full stdout: $(cat "$tmp/err")"
done
"$BIN/trc2pstats" --from 100000 -o "$tmp/outdir/p" "$tmp/big.trc" 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'no samples selected' "$tmp/err" || bad "empty selection: exit $rc $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/outdir")" ] || bad "empty selection left a file"
# a --pid that matches no process: one warning naming it, exit 1, no file
"$BIN/trc2pstats" --pid 999999 -o "$tmp/outdir/p" "$tmp/big.trc" 2> "$tmp/err"; rc=$?
[ $rc -eq 1 ] && [ "$(lines "$tmp/err")" -eq 1 ] &&
  grep -q "big.trc: --pid '999999' matches no process (processes: " "$tmp/err" ||
  bad "unmatched --pid: exit $rc $(cat "$tmp/err")"
[ -z "$(ls -A "$tmp/outdir")" ] || bad "unmatched --pid left a file"
# binary to a terminal is refused (script gives the tool a pty)
if script -qec true /dev/null > /dev/null 2>&1; then
  script -qec "$BIN/trc2pstats $tmp/big.trc" /dev/null > "$tmp/tty.txt" 2>&1; rc=$?
  [ $rc -eq 2 ] || bad "binary to a terminal: exit $rc"
  grep -q 'refusing to write binary output to a terminal' "$tmp/tty.txt" || bad "no refusal message: $(head -c 200 "$tmp/tty.txt")"
fi
# bad selection values
for a in "--from x" "--to -1" "--from 2 --to 1" "--pid -5" "--pid=" "--weight bytes"; do
  # shellcheck disable=SC2086
  "$BIN/trc2collapsed" $a "$tmp/big.trc" > /dev/null 2> "$tmp/err"; rc=$?
  [ $rc -eq 2 ] && [ "$(lines "$tmp/err")" -le 2 ] || bad "trc2collapsed $a: exit $rc"
done

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "conv_errors: ok"
