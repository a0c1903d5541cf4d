#!/usr/bin/env bash
# trec on every interpreter found: function names (qualified on 3.11+),
# files and lines checked against the fixture's source, class methods,
# nested functions, non-ASCII names and a non-ASCII path, generators, an
# asyncio task, 600-deep recursion, process metadata and the RSS counter;
# also the summary line and the exit status.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

PHASE=0.4

one() {
  local py=$1 ver=$2 tag=$3
  local dir="$TMPD/$tag/données-测试"
  mkdir -p "$dir"
  cp "$FIX/trec_basic.py" "$dir/"
  local out="$TMPD/$tag/run.trc" rc=0
  # the program's CPU time is the reference for its on-CPU samples
  TREC_SELF_TIMING=1 "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/cpu_of.py" "$TMPD/$tag/usage" \
    timeout 120 "$TREC" -o "$out" "$py" "$dir/trec_basic.py" $PHASE 2>"$TMPD/$tag/err" || rc=$?
  cat "$TMPD/$tag/err"
  [ $rc -eq 0 ] || { echo "trec exited $rc"; return 1; }
  grep -q "^trec: [0-9]* samples, .* written to $out\$" "$TMPD/$tag/err" ||
    { echo "no summary line"; return 1; }
  dump_trace "$out" || return 1
  check basic "$out.txt" "$dir/trec_basic.py" "$ver" $PHASE "usage=$TMPD/$tag/usage,$TMPD/$tag/err"
}

for_each_python one
finish
