#!/usr/bin/env bash
# Process names of PyTorch DataLoader workers: a DataLoader with two
# workers, forked and then spawned, recorded with -s under Debian's
# python3 (the interpreter with torch).  A forked worker has its parent's
# command line and a spawned one multiprocessing's, so only trec's label
# (from their stacks: torch's _worker_loop; for a spawned worker after
# its imports) tells them; the collapsed --pids roots, speedscope profile
# names and Chrome process_name must say "DataLoader worker N", numbered
# apart, with the pids the program printed (tests/e2e/lib/procnames_check.py).
# Skips (77) without torch.
# retry-once: records a live program against the clock (tests/run-all)
set -u
TRC_ROOT="${TRC_ROOT:-$PWD}"
BIN="${BIN:-bin}"
case "$BIN" in /*) ;; *) BIN="$TRC_ROOT/$BIN" ;; esac
py=/usr/bin/python3
[ -x "$BIN/trec" ] || { echo "trec is not built ($BIN/trec)"; exit 77; }
[ -x "$py" ] || { echo "skip: $py is missing"; exit 77; }
"$py" -c 'import torch' 2>/dev/null || { echo "skip: torch is not installed for $py"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# run METHOD: record a DataLoader whose workers start by METHOD, convert, check
run() {
  local out=$tmp/$1 rc=0
  timeout 120 env -u RANK -u LOCAL_RANK -u OMPI_COMM_WORLD_RANK -u PMI_RANK -u SLURM_PROCID \
    "$BIN/trec" -q -s -o "$out.trc" "$py" "$TRC_ROOT/fixtures/workloads/procnames_dataloader.py" 0.15 "$1" \
    >"$out.pids" || rc=$?
  [ $rc -eq 0 ] || { echo "FAIL: $1: trec exited $rc"; fails=$((fails + 1)); return; }
  grep -c '^worker ' "$out.pids" | grep -qx 2 ||
    { echo "FAIL: $1: want 2 DataLoader workers: $(cat "$out.pids")"; fails=$((fails + 1)); return; }
  # exit 1 is a warning (samples the recorder missed on a loaded machine)
  for t in "trc2collapsed --pids --idle -o $out.collapsed" "trc2speedscope --idle -o $out.speedscope.json" \
           "trc2chrome -o $out.trace.json"; do
    rc=0
    $BIN/$t "$out.trc" 2>>"$out.err" || rc=$?
    [ $rc -le 1 ] || { echo "FAIL: $1: $t exited $rc: $(cat "$out.err")"; fails=$((fails + 1)); return; }
  done
  echo "$1:"
  "$py" "$TRC_ROOT/tests/e2e/lib/procnames_check.py" "$out.pids" "$out.collapsed" \
    "$out.speedscope.json" "$out.trace.json" procnames_dataloader.py - "DataLoader worker [01]" ||
    fails=$((fails + 1))
}

run fork
run spawn
[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "trec_procnames_torch: ok"
