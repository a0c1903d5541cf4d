#!/usr/bin/env bash
# trec --dump while threads start and end all the time (fixtures/
# workloads/dump_churn.py), every interpreter found: a thread list caught
# changing is read again (a bounded number of times), so each of 15
# dumps in a row exits 0 within a second and shows the main thread in
# wait_here at its line, both it and the spawner thread by their real OS
# ids (the pid, and the id the spawner wrote) and names, never a process
# without threads; as JSON too.  Before 3.11 those ids are inferred
# (lib/py/py_tid.c), which must hold under the churn.
# retry-once: reads a live program against the clock (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

one() {
  local py=$1 ver=$2 tag=$3 i d="$TMPD/$3" t0 t1 line
  mkdir -p "$d"
  "$py" "$FIX/dump_churn.py" "$d/ready" &
  local target=$!
  for i in $(seq 100); do [ -e "$d/ready" ] && break; sleep 0.1; done
  [ -e "$d/ready" ] || { kill $target; echo "target never got ready"; return 1; }
  line=$(grep -n '# at: wait_here' "$FIX/dump_churn.py" | cut -d: -f1)
  local sp
  sp=$(cat "$d/ready")
  # The spawner, starting a thread at every moment, often has its stack
  # caught changing ("not shown"): its line, id and name are asserted,
  # not its frames.
  local rc=0
  for i in $(seq 15); do
    t0=$(now_ms)
    timeout 10 "$TREC" --dump --pid $target >"$d/out" 2>"$d/err" || { echo "dump $i: exit $?: $(cat "$d/err")"; rc=1; break; }
    t1=$(now_ms)
    [ $((t1 - t0)) -lt 1000 ] || { echo "dump $i took $((t1 - t0)) ms"; rc=1; break; }
    if grep -q 'thread list changed' "$d/out" ||
      ! grep -q "^Thread $target \"MainThread\"" "$d/out" ||
      ! grep -q "^Thread $sp \"spawner\"" "$d/out" ||
      ! grep -qF "dump_churn.py\", line $line, in wait_here" "$d/out"; then
      echo "dump $i (spawner $sp):"; cat "$d/out"; rc=1; break
    fi
  done
  if [ $rc -eq 0 ]; then
    timeout 10 "$TREC" --dump --json --pid $target >"$d/json" 2>"$d/err" &&
      "$CHECK_PY" -c '
import json, sys
doc = json.load(open(sys.argv[1]))
p = doc["processes"][0]
assert not p["threads_torn"], "threads_torn"
ids = {t["name"]: t["tid"] for t in p["threads"]}
want = {"MainThread": int(sys.argv[2]), "spawner": int(sys.argv[3])}
for name, tid in want.items():
    assert ids.get(name) == tid, (name, tid, ids)
' "$d/json" "$target" "$sp" || rc=1
  fi
  kill $target
  wait $target 2>/dev/null
  return $rc
}

for_each_python one
finish
