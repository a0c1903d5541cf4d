#!/usr/bin/env bash
# Exit codes and warnings of every converter and of trc-dump --check
# (docs/exit-codes.md), on real recordings and on traces made to measure:
#  0. the docs' figures are the code's: docs/exit-codes.md states the 5 %
#     limit and the 100-tick minimum, and traces on either side of them
#     (conv-gen ticks) give exit 0 / exit 1 as the docs say; --help and the
#     man pages state the same limit and --strict;
#  a. a program recorded beside busy processes (ticks come late): exit 0
#     and not a word on stderr when late + missed + invalid are within the
#     limit, computed from trc-dump --summary's counts; exit 1 and one
#     warning when over it;
#  b. --strict: any recorded loss gives exit 1 and one warning (a
#     conv-gen trace with known small losses, and the live trace when it
#     has any);
#  c. trec killed with SIGKILL mid-run, and a complete trace cut at a
#     chunk boundary: exit 1, exactly one warning line naming the missing
#     end record; trc-dump --check says "incomplete", not "ok";
#  d. a trace cut inside a chunk (head -c): exit 1, one line naming the
#     truncation.
# retry-once: records a live program against the clock (tests/run-all)
set -u
cd "${TRC_ROOT:-$(dirname "$0")/../..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
. tests/e2e/lib/pythons.sh
gen=$BUILD/tests/conv-gen
. tests/e2e/lib/converters.sh
convs=("${TRC_CONVERTERS[@]}")
for f in "$gen" "$BIN/trec" "$BIN/trc-dump" "${convs[@]/#/$BIN/}"; do
  [ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }
done
py=$(trec_pythons | head -n1 | cut -d' ' -f1)
[ -n "$py" ] || { echo "no CPython 3.8+ interpreter found"; exit 77; }
tmp=$(mktemp -d)
busy_pids=()
cleanup() {
  local p
  for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
lines() { wc -l < "$1" | tr -d ' '; }

# run TOOL ARGS...: exit status in $rc, stderr in $tmp/err (output to a file)
run() {
  local t=$1; shift
  rc=0
  if [ "$t" = trc-dump ]; then "$BIN/trc-dump" --check "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
  else "$BIN/$t" -o "$tmp/out.$t" "$@" 2> "$tmp/err" || rc=$?; fi
}

# expect_clean NAME ARGS...: every converter and trc-dump --check exit 0, stderr empty
expect_clean() {
  local name=$1 t; shift
  for t in "${convs[@]}" trc-dump; do
    run "$t" "$@"
    [ $rc -eq 0 ] && [ ! -s "$tmp/err" ] || bad "$name: $t exit $rc, want 0 and no warning: $(cat "$tmp/err")"
  done
}

# expect_warning NAME PATTERN TOOLS ARGS...: exit 1, exactly one stderr
# line, a warning matching PATTERN (TOOLS: "all" or "convs")
expect_warning() {
  local name=$1 pat=$2 which=$3 t list; shift 3
  list=("${convs[@]}"); [ "$which" = all ] && list+=(trc-dump)
  for t in "${list[@]}"; do
    run "$t" "$@"
    [ $rc -eq 1 ] || bad "$name: $t exit $rc, want 1: $(cat "$tmp/err")"
    [ "$(lines "$tmp/err")" -eq 1 ] && grep -q "^$t: warning: .*$pat" "$tmp/err" ||
      { bad "$name: $t: want one warning line matching '$pat', got:"; cat "$tmp/err"; }
  done
}

# ---- 0. the documented figures are the ones the tools use
limit=$(sed -n 's|^ *(missed + invalid + late) / ticks *> *\([0-9][0-9]*\) %.*|\1|p' docs/exit-codes.md)
min=$(sed -n 's/.*the recording has at least \([0-9][0-9]*\) ticks.*/\1/p' docs/exit-codes.md)
[ -n "$limit" ] && [ -n "$min" ] || { echo "FAIL: docs/exit-codes.md states no limit ('$limit') or minimum ('$min')"; exit 1; }
grep -q -- '--strict' docs/exit-codes.md || bad "docs/exit-codes.md does not mention --strict"
for t in "${convs[@]}"; do
  "$BIN/$t" --help | tr '\n' ' ' | grep -q "over $limit % of the ticks" || bad "$t --help does not state the $limit % limit"
  sed 's/\\-/-/g' "docs/man/$t.1" | grep -q -- '--strict' || bad "docs/man/$t.1 lacks --strict"
  grep -q "over $limit\\\\~%" "docs/man/$t.1" || bad "docs/man/$t.1 does not state the $limit % limit"
done
# 1000 ticks: exactly the limit passes, one more missed tick is over it
at=$((1000 * limit / 100))
"$gen" ticks $((1000 - at)) "$at" 0 0 "$tmp/at.trc" > /dev/null || { echo "FAIL: generator"; exit 1; }
"$gen" ticks $((999 - at)) $((at + 1)) 0 0 "$tmp/over.trc" > /dev/null || { echo "FAIL: generator"; exit 1; }
expect_clean "exactly $limit % of 1000 ticks" "$tmp/at.trc"
expect_warning "just over $limit % of 1000 ticks" "over the $limit % limit" convs "$tmp/over.trc"
# half the ticks missed: too short a run below the minimum, warned at it
half=$((min / 2))
"$gen" ticks $((min - 1 - half)) "$half" 0 0 "$tmp/short.trc" > /dev/null || { echo "FAIL: generator"; exit 1; }
"$gen" ticks $((min - half)) "$half" 0 0 "$tmp/long.trc" > /dev/null || { echo "FAIL: generator"; exit 1; }
expect_clean "$((min - 1)) ticks, half missed" "$tmp/short.trc"
expect_warning "$min ticks, half missed" "over the $limit % limit" convs "$tmp/long.trc"

# ---- b. --strict with known small losses: exit 1, one warning; without it: clean
"$gen" ticks 1000 3 1 2 "$tmp/small.trc" > /dev/null || { echo "FAIL: generator"; exit 1; }
expect_clean "1000 samples, 6 lost or late" "$tmp/small.trc"
expect_warning "--strict, 6 lost or late" "3 samples missed by the recorder, 1 invalid sample dropped, 2 samples taken late (0.6 % of 1004 ticks)" \
  convs --strict "$tmp/small.trc"
run trc-dump --strict "$tmp/small.trc"
[ $rc -eq 1 ] && [ "$(lines "$tmp/err")" -eq 1 ] && grep -q '^trc-dump: warning: .*recorded 3 missed, 1 invalid and 2 late of 1004 ticks' "$tmp/err" &&
  grep -q ': lossy: ' "$tmp/out" || { bad "trc-dump --check --strict: exit $rc: $(cat "$tmp/err" "$tmp/out")"; }

# ---- a. a live recording beside busy processes
cat > "$tmp/busy.py" <<'EOF'
import sys, time
def work():
    return sum(range(2000))
end = time.time() + float(sys.argv[1])
while time.time() < end:
    work()
EOF
for _ in 1 2; do
  timeout 60 "$py" -c 'while 1: pass' & busy_pids+=($!)
done
"$BIN/trec" -o "$tmp/live.trc" -- "$py" "$tmp/busy.py" 1.5 2> "$tmp/trec.err" ||
  { echo "FAIL: trec: $(cat "$tmp/trec.err")"; exit 1; }
# the share as docs/exit-codes.md defines it, from the trace's own counts
read -r samples missed invalid late < <("$BIN/trc-dump" --summary "$tmp/live.trc" | awk '
  $1 == "samples:" { s = $2 } $1 == "samples_missed" { m = $2 } $1 == "samples_invalid" { i = $2 }
  $1 == "samples_late" { l = $2 } END { print s + 0, m + 0, i + 0, l + 0 }')
ticks=$((samples + missed + invalid)) lost=$((missed + invalid + late))
over=0
[ $((samples + invalid)) -gt 0 ] && [ $ticks -ge "$min" ] && [ $((lost * 100)) -gt $((limit * ticks)) ] && over=1
echo "live: $samples samples, $missed missed, $invalid invalid, $late late of $ticks ticks (over $limit %: $over)"
[ "$samples" -gt 0 ] || bad "live: no samples recorded: $(cat "$tmp/trec.err")"
if [ $over = 0 ]; then
  expect_clean "live, within the limit" "$tmp/live.trc"
  grep -q ' late\| missed' "$tmp/trec.err" && bad "trec's closing line talks of late/missed ticks within the limit: $(cat "$tmp/trec.err")"
else
  expect_warning "live, over the limit" "over the $limit % limit" convs "$tmp/live.trc"
  run trc-dump "$tmp/live.trc"  # --check judges the file: losses count only with --strict
  [ $rc -eq 0 ] && [ ! -s "$tmp/err" ] || bad "live: trc-dump --check exit $rc: $(cat "$tmp/err")"
  grep -q "of $ticks ticks late, missed or torn" "$tmp/trec.err" || bad "trec's closing line does not give the share: $(cat "$tmp/trec.err")"
fi
grep -q ': ok: ' "$tmp/out" || bad "live: trc-dump --check does not say ok: $(cat "$tmp/out")"
if [ $lost -gt 0 ]; then
  expect_warning "live, --strict" "" all --strict "$tmp/live.trc"
else
  run trc2collapsed --strict "$tmp/live.trc"
  [ $rc -eq 0 ] || bad "live, no recorded loss: --strict exit $rc"
fi

# ---- c. incomplete recordings: trec killed, a cut at a chunk boundary
"$BIN/trec" -o "$tmp/killed.trc" -- "$py" "$tmp/busy.py" 20 2> /dev/null &
trec=$!
for _ in $(seq 100); do [ -s "$tmp/killed.trc" ] && break; sleep 0.05; done
sleep 1
kids=$(cat /proc/$trec/task/*/children 2>/dev/null)
{ kill -KILL $trec; wait $trec; } 2>/dev/null
[ -n "$kids" ] && kill $kids 2>/dev/null
for p in "${busy_pids[@]}"; do kill "$p" 2>/dev/null; done
busy_pids=()
[ -s "$tmp/killed.trc" ] || { echo "FAIL: the killed recording wrote nothing"; exit 1; }
expect_warning "trec killed" "the recording ends without its end record" all "$tmp/killed.trc"
run trc-dump "$tmp/killed.trc"
grep -q ': incomplete: .*(0 damaged)' "$tmp/out" || bad "trec killed: trc-dump --check: $(cat "$tmp/out")"

# the live trace without its last chunk (the one holding SEGMENT_END)
last=$("$BIN/trc-dump" "$tmp/live.trc" | sed -n 's/^0x\([0-9a-f]*\) DATA .*/\1/p' | tail -n1)
[ -n "$last" ] || { echo "FAIL: no DATA chunk in the live trace"; exit 1; }
head -c $((16#$last)) "$tmp/live.trc" > "$tmp/boundary.trc"
expect_warning "cut at a chunk boundary" "the recording ends without its end record.*output covers what was recorded" \
  convs "$tmp/boundary.trc"
run trc-dump "$tmp/boundary.trc"
[ $rc -eq 1 ] && grep -q ': incomplete: .*(0 damaged)' "$tmp/out" && [ "$(lines "$tmp/err")" -eq 1 ] ||
  bad "cut at a chunk boundary: trc-dump --check exit $rc: $(cat "$tmp/err" "$tmp/out")"

# ---- d. cut inside the last chunk: truncation, which explains the lost end
head -c $((16#$last + 30)) "$tmp/live.trc" > "$tmp/mid.trc"
expect_warning "cut mid-chunk" "input truncated" convs "$tmp/mid.trc"
grep -q 'end record' "$tmp/err" && bad "cut mid-chunk: the missing end blamed on the recorder too: $(cat "$tmp/err")"
run trc-dump "$tmp/mid.trc"
[ $rc -eq 1 ] && [ "$(lines "$tmp/err")" -eq 1 ] && grep -q '^trc-dump: error: .*input ends inside a chunk' "$tmp/err" &&
  grep -q ': damaged: ' "$tmp/out" || bad "cut mid-chunk: trc-dump --check exit $rc: $(cat "$tmp/err" "$tmp/out")"

[ $fails -eq 0 ] && { echo "conv_exit_codes: ok"; exit 0; }
echo "$fails failure(s)"
exit 1
