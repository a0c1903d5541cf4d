#!/usr/bin/env bash
# Hostile targets: a target with 1,000 threads.  All of them
# are sampled and named (threading names), the trace is intact, and
# when a tick takes longer than the period the lag is counted (late and
# missed ticks in the self-timing line and as LOSS records) rather than hidden.
# The recorder's cost per sample (TREC_SELF_TIMING) is printed.
# Debian's python3 and the oldest and newest other interpreter (every
# one with TREC_HOSTILE_ALL=1).  Under TRC_ASAN=1: 300 threads.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"
. "$(dirname "$0")/lib/hostile_common.sh"
some_pythons

W="$FIX/hostile_threads.py"
N=1000
[ $ASAN = 1 ] && N=300

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  local out="$TMPD/$tag.trc" ready="$TMPD/$tag.ready"
  TREC_SELF_TIMING=1 timeout 300 "$TREC" -o "$out" "$py" "$W" $N 1.5 "$ready" 2>"$out.stderr" || rc=$?
  [ $rc -eq 0 ] || { echo "trec exited $rc"; cat "$out.stderr"; return 1; }
  grep "self-timing\|samples," "$out.stderr"
  "$DUMP" --check "$out" >"$out.check" 2>&1 || { echo "trc-dump --check failed"; cat "$out.check"; return 1; }
  dump_trace "$out" || return 1
  hcheck threads "$out.txt" "$out.stderr" "$W" "$ver" $N || return 1
  # lag accounted: a tick over 1000 threads takes longer than 1 ms here,
  # so some ticks were late; the self-timing line's exact tick counts
  # and the trace's losses agree
  local late missed rlate rmissed
  late=$(sed -n 's/^trec: self-timing: .* ticks taken, \([0-9]*\) late, [0-9]* missed$/\1/p' "$out.stderr")
  missed=$(sed -n 's/^trec: self-timing: .* ticks taken, [0-9]* late, \([0-9]*\) missed$/\1/p' "$out.stderr")
  rlate=$(awk -F'\t' '$1 == "loss" && $2 == 3 { n += $3 } END { print n + 0 }' "$out.txt")
  rmissed=$(awk -F'\t' '$1 == "loss" && $2 == 1 { n += $3 } END { print n + 0 }' "$out.txt")
  [ "$late" = "$rlate" ] && [ "$missed" = "$rmissed" ] ||
    { echo "summary: $late late, $missed missed; trace: $rlate late, $rmissed missed"; return 1; }
  [ $((late + missed)) -gt 0 ] || { echo "1000 threads at 1 kHz and not one tick late: lag not counted?"; return 1; }
  grep -q "self-timing: .* per sample p50" "$out.stderr" || { echo "no self-timing line"; return 1; }
}

for_each_python one
finish
