#!/usr/bin/env bash
# Where the real check's overhead comes from, on a machine with a GPU:
# tests/gpu/real_torch_check.py run bare and under trec in several ways,
# interleaved ROUNDS times so that drifts hit every way alike.  Ways
# (SPLIT_WAYS, a space-separated list, picks them; default below):
#
#   bare         no trec
#   cpu          trec --no-gpu: sampling only (perf switch records, reads)
#   cpu-proc     the same with TREC_THREAD_STATE=proc: no switch records
#   gpu          trec: sampling and the CUPTI injection (activity records,
#                a Python stack at every launch and sync call)
#   gpu-100      trec -r 100: a tenth of the ticks
#   off-PARTS    trec with TREC_GPU_OFF=PARTS (docs/gpu.md, Environment:
#                a comma list of runtime, driver, sync, memcpy, memset,
#                overhead, marker, stacks left off; kernels stay on)
#
# Default: bare cpu gpu off-stacks off-driver off-runtime off-sync
#          off-runtime,driver,sync,memcpy,memset,overhead,marker,stacks
#
# Prints, per way, the median over the rounds of the whole timed work
# and of each launch-bound window (train: the training step; syncs: the
# .item()/.cpu() loop), each with its ratio to bare; what a part costs is
# the difference between gpu and off-PART.
#
# Usage: tests/gpu/overhead_split.sh [ROUNDS (default 3)] [N (the
#        script's --n, default 200)]
# Env: BIN (default bin), PY (default python3), SPLIT_WAYS.  Exit 0, or
# 1 when a run failed.
set -u
BIN=${BIN:-bin} PY=${PY:-python3}
rounds=${1:-3} n=${2:-200}
here=$(cd "$(dirname "$0")" && pwd)
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
work=$(mktemp -d /tmp/trc-split-XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
ways=${SPLIT_WAYS:-"bare cpu gpu off-stacks off-driver off-runtime off-sync off-runtime,driver,sync,memcpy,memset,overhead,marker,stacks"}

one() {
  local way=$1 i=$2 out="$work/$3-$2.json"
  local run=("$PY" "$here/real_torch_check.py" --n "$n" --out "$out")
  case $way in
    bare) "${run[@]}" ;;
    cpu) "$BIN/trec" -q --no-gpu -o "$work/t.trc" "${run[@]}" ;;
    cpu-proc) TREC_THREAD_STATE=proc "$BIN/trec" -q --no-gpu -o "$work/t.trc" "${run[@]}" ;;
    gpu) "$BIN/trec" -q -o "$work/t.trc" "${run[@]}" ;;
    gpu-100) "$BIN/trec" -q -r 100 -o "$work/t.trc" "${run[@]}" ;;
    off-*) TREC_GPU_OFF=${way#off-} "$BIN/trec" -q -o "$work/t.trc" "${run[@]}" ;;
    *) echo "overhead_split: unknown way '$way'" >&2; return 1 ;;
  esac > /dev/null
}

k=0
for way in $ways; do k=$((k + 1)); done
for i in $(seq 1 "$rounds"); do
  j=0
  for way in $ways; do
    j=$((j + 1))
    one "$way" "$i" "w$j" || { echo "overhead_split: $way run $i failed"; exit 1; }
  done
done
"$PY" - "$work" "$rounds" $ways <<'PY'
import json, statistics, sys
work, rounds, ways = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(j, i):
    return json.load(open("%s/w%d-%d.json" % (work, j, i)))
def host(d, name):
    for w in d["windows"]:
        if w["name"] == name:
            return (w["cpu_end_ns"] - w["cpu_start_ns"]) / 1e9
    return float("nan")
rows = {}
for j, way in enumerate(ways, 1):
    runs = [load(j, i) for i in range(1, rounds + 1)]
    rows[way] = {"all": statistics.median(r["wall_s"] for r in runs),
                 "train": statistics.median(host(r, "train") for r in runs),
                 "syncs": statistics.median(host(r, "syncs") for r in runs)}
base = rows.get("bare") or rows[ways[0]]
for way in ways:
    r = rows[way]
    print("split: %-10s all %.4f s (x%.3f)  train %.2f ms (x%.3f)  syncs %.2f ms (x%.3f)"
          % (way[:60], r["all"], r["all"] / base["all"], 1e3 * r["train"],
             r["train"] / base["train"], 1e3 * r["syncs"], r["syncs"] / base["syncs"]))
PY
