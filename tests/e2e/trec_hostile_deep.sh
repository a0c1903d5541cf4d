#!/usr/bin/env bash
# Hostile targets: a stack 5,000 frames deep, more than a
# trace may hold (4096, spec R-ID-13).  Recorded as its innermost 4095
# frames under a synthetic root frame <truncated> (kind other; spec §9
# "Deep stacks"), with one warning; never invalid, never invented.  A
# 4,000-frame stack (under the limit) is recorded whole, exactly as deep
# as the program counted.  Every interpreter found.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"
. "$(dirname "$0")/lib/hostile_common.sh"

W="$FIX/hostile_deep.py"
SECS=0.6
[ $ASAN = 1 ] && SECS=0.4

one() {
  local py=$1 ver=$2 tag=$3 depth rc out
  for depth in 5000 4000; do
    out="$TMPD/$tag-$depth.trc"
    rc=0
    timeout 120 "$TREC" -o "$out" "$py" "$W" $depth $SECS "$out.depth" 2>"$out.stderr" || rc=$?
    [ $rc -eq 0 ] || { echo "depth $depth: trec exited $rc"; cat "$out.stderr"; return 1; }
    "$DUMP" --check "$out" >"$out.check" 2>&1 || { echo "trc-dump --check failed"; cat "$out.check"; return 1; }
    dump_trace "$out" || return 1
    hcheck deep "$out.txt" "$W" "$ver" $depth "$out.depth" || { echo "depth $depth"; return 1; }
    local warned=0
    grep -q "deeper than 4095 frames" "$out.stderr" && warned=1
    if [ $depth -gt 4096 ] && [ $warned = 0 ]; then echo "no warning about the truncated stack"; cat "$out.stderr"; return 1; fi
    if [ $depth -le 4096 ] && [ $warned = 1 ]; then echo "truncation warning for a $depth-frame stack"; return 1; fi
    # not dropped as invalid for being deep (a few stacks torn while the
    # recursion goes down or up are; before truncation every sample was)
    local n bad
    n=$(sed -n 's/^trec: \([0-9]*\) samples,.*/\1/p' "$out.stderr")
    bad=$(sed -n 's/.* \([0-9]*\) invalid,.*/\1/p' "$out.stderr")
    # (a sanitizer build reads a deep stack so slowly that the descent and
    # the unwinding, where stacks tear, are a larger share of the samples)
    local share=10
    [ $ASAN = 1 ] && share=3
    [ -n "$n" ] && [ $((bad * share)) -le "$n" ] ||
      { echo "depth $depth: $bad invalid of $n samples"; cat "$out.stderr"; return 1; }
  done
}

for_each_python one
finish
