#!/usr/bin/env bash
# trec --dump --locals: every interpreter found.  A program asleep with a
# local of every kind (fixtures/workloads/dump_locals.py: None, bools,
# ints small, negative and of many digits, floats, str plain, non-ASCII,
# with control characters and cut at 100 characters, bytes, tuple, list,
# dict, objects of a class, one named like a builtin, an unbound local)
# shows each as the target's own repr says (tests/e2e/lib/
# dump_locals_check.py), as text and as JSON, within a second.  Without
# --locals no locals are shown; --locals without --dump is a usage error.
# retry-once: reads a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

one() {
  local py=$1 ver=$2 tag=$3 i d="$TMPD/$3" ok=0 t0 t1
  mkdir -p "$d"
  "$py" "$FIX/dump_locals.py" "$d/ready" &
  local target=$!
  for i in $(seq 100); do [ -e "$d/ready" ] && break; sleep 0.1; done
  [ -e "$d/ready" ] || { kill $target; echo "target never got ready"; return 1; }
  sleep 0.3 # from writing READY into time.sleep
  t0=$(now_ms)
  timeout 10 "$TREC" --dump --locals --pid $target >"$d/text" 2>"$d/err" &&
    t1=$(now_ms) &&
    timeout 10 "$TREC" --dump --locals --json --pid $target >"$d/json" 2>>"$d/err" &&
    "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/dump_locals_check.py" "$FIX/dump_locals.py" "$d/ready" \
      "$d/text" "$d/json" &&
    timeout 10 "$TREC" --dump --pid $target >"$d/plain" 2>>"$d/err" &&
    ! grep -q '^    v_str = ' "$d/plain" && ok=1
  if [ $ok -eq 1 ] && [ $((t1 - t0)) -ge 1000 ]; then
    echo "trec --dump --locals took $((t1 - t0)) ms"
    ok=0
  fi
  kill $target
  wait $target 2>/dev/null
  [ $ok -eq 1 ] || { echo "---- text:"; cat "$d/text" "$d/err" 2>/dev/null; return 1; }
}

for_each_python one

rc=0
"$TREC" --locals --pid 1 >/dev/null 2>"$TMPD/usage.err" || rc=$?
if [ $rc -eq 2 ] && grep -q -- "--locals goes with --dump" "$TMPD/usage.err"; then
  RESULTS="$RESULTS  ok    --locals without --dump: $(cat "$TMPD/usage.err")"$'\n'
else
  fail "--locals without --dump: exit $rc: $(cat "$TMPD/usage.err")"
fi
finish
