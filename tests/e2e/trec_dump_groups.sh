#!/usr/bin/env bash
# trec --dump --subprocesses groups identical stacks across processes:
# a parent with 4 children (fixtures/workloads/dump_ranks.py), 3 waiting
# in allreduce and 1 in next_batch, gives three groups, the 3 ranks
# first, the odd rank and the parent after, as text (one line each,
# pids as ranges) and as JSON (tests/e2e/lib/dump_groups_check.py), on
# every interpreter found.  A dump of one process has no such section.
# retry-once: reads live programs against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

one() {
  local py=$1 ver=$2 tag=$3 i d="$TMPD/$3" ok=0
  mkdir -p "$d"
  "$py" "$FIX/dump_ranks.py" "$d/ready" &
  local parent=$!
  for i in $(seq 150); do [ -e "$d/ready" ] && break; sleep 0.1; done
  [ -e "$d/ready" ] || { kill $parent; echo "target never got ready"; return 1; }
  sleep 0.3 # from writing READY into the marked lines
  timeout 10 "$TREC" --dump --subprocesses --pid $parent >"$d/text" 2>"$d/err" &&
    timeout 10 "$TREC" --dump --subprocesses --json --pid $parent >"$d/json" 2>>"$d/err" &&
    "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/dump_groups_check.py" "$FIX/dump_ranks.py" "$d/ready" \
      "$d/text" "$d/json" &&
    timeout 10 "$TREC" --dump --pid $parent >"$d/one" 2>>"$d/err" &&
    ! grep -q '^Identical stacks' "$d/one" && ok=1
  kill $parent
  wait $parent 2>/dev/null
  [ $ok -eq 1 ] || { echo "---- text:"; cat "$d/text" "$d/err" 2>/dev/null; return 1; }
}

for_each_python one
finish
