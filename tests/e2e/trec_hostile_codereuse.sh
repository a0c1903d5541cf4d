#!/usr/bin/env bash
# Hostile targets: code objects freed while sampled and their
# memory reused by new ones (compile + exec in a loop; the allocator
# hands the same addresses to the next function's code object, name,
# file name and line table).  lib/py's code cache must not name the old
# function: every sample naming gen_N (file "<gen N>") must fall inside
# gen_N's own run, as the program logged it on the trace's clock
# (fixtures/workloads/hostile_codereuse.py).  Every interpreter found.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"
. "$(dirname "$0")/lib/hostile_common.sh"

W="$FIX/hostile_codereuse.py"
ROUNDS=300 MS=15
[ $ASAN = 1 ] && ROUNDS=150

one() {
  local py=$1 ver=$2 tag=$3 rc=0
  local out="$TMPD/$tag.trc"
  timeout 120 "$TREC" -o "$out" "$py" "$W" $ROUNDS $MS "$out.log" 2>"$out.stderr" || rc=$?
  [ $rc -eq 0 ] || { echo "trec exited $rc"; cat "$out.stderr"; return 1; }
  "$DUMP" --check "$out" >"$out.check" 2>&1 || { echo "trc-dump --check failed"; cat "$out.check"; return 1; }
  "$DUMP" --events "$out" >"$out.ev" || return 1
  dump_trace "$out" || return 1
  hcheck codereuse "$out.ev" "$out.log" || return 1
  hcheck generic "$out.txt" "$out.stderr" "$W" "$ver" || return 1
  echo "  $ver: $(tail -n1 "$out.log") (code objects a pointer check cannot tell from the last one)" >>"$TMPD/lookalikes"
}

for_each_python one
cat "$TMPD/lookalikes" 2>/dev/null
finish
