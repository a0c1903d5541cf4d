#!/usr/bin/env bash
# bench/dump.sh — what `trec --dump` takes on a big stuck process:
# bench/dump_threads.py, 100 threads each 50 frames deep, asleep; the
# wall time of one dump (attach, read every stack, print), median of
# the runs, as text, with --locals, and as JSON.  BENCH_QUICK=1: fewer
# runs.  Under bench/run-all each figure also goes to $BENCH_RESULTS
# (group dump).
set -u
cd "$(dirname "$0")/.."
. bench/lib.bash
BIN="${BIN:-bin}"
TREC="$BIN/trec"
[ -x "$TREC" ] || { echo "trec not built"; exit 1; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
if [ "${BENCH_QUICK:-0}" = 1 ]; then RUNS=3; else RUNS=9; fi
T=$(mktemp -d /tmp/trec-dump-bench.XXXXXX)
"$PY" bench/dump_threads.py "$T/ready" 100 50 &
target=$!
trap 'kill $target 2>/dev/null; wait $target 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 300); do [ -e "$T/ready" ] && break; sleep 0.1; done
[ -e "$T/ready" ] || { echo "the target never got ready"; exit 1; }
echo "target: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])')), 100 threads x 50 frames;" \
  "$(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"

# median wall time in ms of RUNS dumps with the given options
measure() {
  local i t0 t1
  for i in $(seq "$RUNS"); do
    t0=$(date +%s%N)
    "$TREC" --dump "$@" --pid $target >"$T/out" 2>"$T/err" || { cat "$T/err"; return 1; }
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000))
  done | sort -n | awk '{ v[NR] = $1 } END { printf "%.3f\n", v[int((NR + 1) / 2)] / 1000 }'
}

frames=$("$TREC" --dump --pid $target | grep -c '^  File ')
echo "frames shown: $frames"
[ "$frames" -ge 5000 ] || { echo "want 100 x 50 frames, the dump shows $frames"; exit 1; }
for mode in text locals json; do
  case $mode in text) opts=() ;; locals) opts=(--locals) ;; json) opts=(--json) ;; esac
  ms=$(measure "${opts[@]}") || exit 1
  echo "trec --dump ${opts[*]}: ${ms} ms (median of $RUNS)"
  bench_result dump "${mode}_ms" "$ms" ms "100 threads x 50 frames, median of $RUNS"
done
