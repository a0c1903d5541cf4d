#!/usr/bin/env bash
# On CPU means on a CPU, on a loaded machine too: with twice as many busy
# loops of the test's own as the machine has CPUs, the program's busy
# threads wait for a CPU much of the time (runnable, not running), and
# the on-CPU samples of all its threads must still add up to its CPU time
# (at least 85 % of what it measured of itself, os.times(), when scaled
# for the ticks trec skipped; at most 115 % as taken), not to its
# runnable time (4 to 5 times as much here: the old meaning of on CPU).  The workload and its checker are trec_native_threads.sh's
# (a Python thread and a C thread busy at once, a C thread that calls into
# Python); with switch records and with TREC_THREAD_STATE=proc.
# retry-once: records a live program against the clock on a loaded machine (tests/run-all)
. "$(dirname "$0")/lib/trec_common.sh"
command -v cc >/dev/null || { echo "no C compiler (cc) to build the fixture's library"; exit 77; }
LIB="$TMPD/native_threads.so"
cc -O1 -shared -fPIC -pthread -o "$LIB" "$FIX/native_threads.c" || { echo "cannot build $LIB"; exit 1; }

LOAD_PIDS=()
stop_load() {
  local p
  for p in "${LOAD_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${LOAD_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  LOAD_PIDS=()
}
trap 'stop_load; [ -n "${TREC_E2E_KEEP:-}" ] || rm -rf "$TMPD"' EXIT
ncpu=$(nproc 2>/dev/null || echo 2)
for _ in $(seq $((2 * ncpu))); do
  sh -c 'while :; do :; done' &
  LOAD_PIDS+=($!)
done

run_case() {
  local out=$1 rc=0
  shift
  env "$@" timeout 120 "$TREC" -q -o "$out" "$CHECK_PY" "$FIX/trec_native_threads.py" "$LIB" 1.2 "$out.json" || rc=$?
  [ $rc -eq 0 ] || { echo "trec exited $rc"; return 1; }
  dump_trace "$out" || return 1
  # the load must have bitten: the process's threads runnable well over
  # their CPU time, else this run tells nothing of CPU against runnable
  "$CHECK_PY" - "$out.json" <<'PY' || return 1
import json, sys
t = json.load(open(sys.argv[1]))
cpu = t["threads"]["main"]["cpu"] + t["threads"]["spin_native"]["cpu"]
run = t["threads"]["main"]["runnable"] + t["threads"]["spin_native"]["runnable"]
print("busy threads: cpu %.3f s, runnable %.3f s (%.2fx)" % (cpu, run, run / cpu))
sys.exit(0 if run >= 1.3 * cpu else "the machine was not loaded enough: runnable %.2fx CPU" % (run / cpu))
PY
  "$CHECK_PY" "$TRC_ROOT/tests/e2e/lib/native_check.py" "$out.txt" "$out.json" 0.85 1.15
}

loaded() {
  echo "-- switch records"
  run_case "$TMPD/sw.trc" || return 1
  echo "-- TREC_THREAD_STATE=proc"
  run_case "$TMPD/proc.trc" TREC_THREAD_STATE=proc
}

PYTHONS="$CHECK_PY $("$CHECK_PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
for_each_python loaded
finish
