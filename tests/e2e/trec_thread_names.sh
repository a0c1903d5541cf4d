#!/usr/bin/env bash
# Short-lived threads carry their threading name, from the samples they
# get while they live: 200 threads named worker-N busy 5-20 ms each, and
# the handler threads of a ThreadingHTTPServer.  The truth is what each
# thread wrote down about itself (its kernel id and its name).  A thread
# renamed once its name could be read is shown under that name for all
# its samples by the converters (trc2chrome, trc2speedscope).  Every
# interpreter found.
# retry-once: records a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

one() {
  local py=$1 ver=$2 tag=$3 mode rc
  for mode in workers http; do
    local out="$TMPD/$tag-$mode.trc" truth="$TMPD/$tag-$mode.json"
    rc=0
    timeout 120 "$TREC" -q -o "$out" "$py" "$FIX/trec_short_threads.py" $mode "$truth" || rc=$?
    [ $rc -eq 0 ] || { echo "trec ($mode) exited $rc"; return 1; }
    dump_trace "$out" || return 1
    # exit 1: the trace records loss (ticks a loaded machine made trec skip)
    for conv in chrome speedscope; do
      rc=0
      "$BIN/trc2$conv" -o "$out.$conv.json" "$out" 2>"$out.$conv.err" || rc=$?
      [ $rc -le 1 ] || { echo "trc2$conv exited $rc"; cat "$out.$conv.err"; return 1; }
    done
    echo "-- $mode"
    "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/names_check.py" "$out.txt" "$truth" \
      "$out.chrome.json" "$out.speedscope.json" || return 1
  done
}

for_each_python one
finish
