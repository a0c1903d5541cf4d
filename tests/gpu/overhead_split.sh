#!/usr/bin/env bash
# Where the real check's overhead comes from, on a machine with a GPU:
# tests/gpu/real_torch_check.py's timed work (the sum of its windows,
# each ended by a device synchronisation) run bare and under trec in
# four ways, interleaved ROUNDS times so that drifts hit every way alike:
#
#   bare      no trec
#   cpu       trec --no-gpu: sampling only (perf switch records, reads)
#   cpu-proc  trec --no-gpu with TREC_THREAD_STATE=proc: sampling
#             without the per-thread perf switch records
#   gpu       trec: sampling and the CUPTI injection (activities, API
#             records, a Python stack at every launch)
#   gpu-100   trec -r 100: the same with a tenth of the ticks
#
# Prints one line per way: the median timed work, its range, and the
# ratio to bare's median; then gpu/cpu, the injection's own share.
#
# Usage: tests/gpu/overhead_split.sh [ROUNDS (default 4)] [N (the
#        script's --n, default 800: about 1 s of timed work on an H200)]
# Env: BIN (default bin), PY (default python3).  Exit 0, or 1 when a
# run failed.
set -u
BIN=${BIN:-bin} PY=${PY:-python3}
rounds=${1:-4} n=${2:-800}
here=$(cd "$(dirname "$0")" && pwd)
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
work=$(mktemp -d /tmp/trc-split-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
ways="bare cpu cpu-proc gpu gpu-100"

one() {
  local way=$1 i=$2 out="$work/$1-$2.json"
  case $way in
    bare) "$PY" "$here/real_torch_check.py" --n "$n" --out "$out" ;;
    cpu) "$BIN/trec" -q --no-gpu -o "$work/t.trc" "$PY" "$here/real_torch_check.py" --n "$n" --out "$out" ;;
    cpu-proc) TREC_THREAD_STATE=proc "$BIN/trec" -q --no-gpu -o "$work/t.trc" \
                "$PY" "$here/real_torch_check.py" --n "$n" --out "$out" ;;
    gpu) "$BIN/trec" -q -o "$work/t.trc" "$PY" "$here/real_torch_check.py" --n "$n" --out "$out" ;;
    gpu-100) "$BIN/trec" -q -r 100 -o "$work/t.trc" "$PY" "$here/real_torch_check.py" --n "$n" --out "$out" ;;
  esac > /dev/null
}

for i in $(seq 1 "$rounds"); do
  for way in $ways; do
    one "$way" "$i" || { echo "overhead_split: $way run $i failed"; exit 1; }
  done
done
"$PY" - "$work" "$rounds" $ways <<'PY'
import json, statistics, sys
work, rounds, ways = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
walls = {w: [json.load(open("%s/%s-%d.json" % (work, w, i)))["wall_s"] for i in range(1, rounds + 1)]
         for w in ways}
med = {w: statistics.median(v) for w, v in walls.items()}
for w in ways:
    print("split: %-8s median %.4f s (range %.4f-%.4f, n=%d)  ratio to bare %.3f"
          % (w, med[w], min(walls[w]), max(walls[w]), rounds, med[w] / med["bare"]))
print("split: gpu / cpu (the injection's own part) %.3f; cpu / bare (sampling) %.3f; "
      "cpu-proc / bare (sampling without switch records) %.3f"
      % (med["gpu"] / med["cpu"], med["cpu"] / med["bare"], med["cpu-proc"] / med["bare"]))
PY
