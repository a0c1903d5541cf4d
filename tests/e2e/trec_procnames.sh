#!/usr/bin/env bash
# Process names (lib/procname.c, format 1.1 PROCESS rank and label): a
# multiprocessing Pool(2) recorded with -s under the spawn start method
# (workers and the resource tracker named from their command lines) with
# RANK=3 in its environment, and under fork (workers named by trec from
# their stacks, no rank).  trc2collapsed --pids roots, speedscope profile
# names and Chrome process_name metadata must name the script, each
# "multiprocessing worker" and the "multiprocessing.resource_tracker"
# with the pids the program printed (tests/e2e/lib/procnames_check.py).
# One interpreter: Debian's python3, else the first one found.
# retry-once: records a live program against the clock (tests/run-all)
set -u
TRC_ROOT="${TRC_ROOT:-$PWD}"
BIN="${BIN:-bin}"
case "$BIN" in /*) ;; *) BIN="$TRC_ROOT/$BIN" ;; esac
. "$TRC_ROOT/tests/e2e/lib/pythons.sh"
[ -x "$BIN/trec" ] || { echo "trec is not built ($BIN/trec)"; exit 77; }
py=$(trec_pythons | head -n1 | cut -d' ' -f1)
[ -n "$py" ] || { echo "no CPython 3.8+ interpreter found"; exit 77; }
check_py=/usr/bin/python3
[ -x "$check_py" ] || check_py=$py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# run METHOD RANK: record, convert, check
run() {
  local method=$1 rank=$2 out=$tmp/$1 rc=0
  if [ "$rank" = - ]; then
    timeout 120 env -u RANK -u LOCAL_RANK -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID \
      "$BIN/trec" -q -s -o "$out.trc" "$py" "$TRC_ROOT/fixtures/workloads/procnames_pool.py" "$method" 0.4 \
      >"$out.pids" || rc=$?
  else
    timeout 120 env RANK="$rank" "$BIN/trec" -q -s -o "$out.trc" \
      "$py" "$TRC_ROOT/fixtures/workloads/procnames_pool.py" "$method" 0.4 >"$out.pids" || rc=$?
  fi
  [ $rc -eq 0 ] || { echo "FAIL: $method: trec exited $rc"; fails=$((fails + 1)); return; }
  # exit 1 is a warning (samples the recorder missed on a loaded machine)
  for t in "trc2collapsed --pids --idle -o $out.collapsed" "trc2speedscope --idle -o $out.speedscope.json" \
           "trc2chrome -o $out.trace.json"; do
    rc=0
    $BIN/$t "$out.trc" 2>>"$out.err" || rc=$?
    [ $rc -le 1 ] || { echo "FAIL: $method: $t exited $rc: $(cat "$out.err")"; fails=$((fails + 1)); return; }
  done
  if [ "$method" = spawn ]; then
    grep -q '^tracker ' "$out.pids" || { echo "FAIL: spawn: the program started no resource tracker"; fails=$((fails + 1)); }
  fi
  echo "$method (rank $rank):"
  "$check_py" "$TRC_ROOT/tests/e2e/lib/procnames_check.py" "$out.pids" "$out.collapsed" \
    "$out.speedscope.json" "$out.trace.json" procnames_pool.py "$rank" "multiprocessing worker" ||
    fails=$((fails + 1))
}

run spawn 3
run fork -
[ $fails -eq 0 ] || { echo "$fails check(s) failed ($py)"; exit 1; }
echo "trec_procnames: ok ($py)"
