#!/usr/bin/env bash
# bench/decode.sh — every converter against the two floors under it, all on
# the SAME trace in one run (the decode section of the benchmark table):
#   - zlib inflate of the trace's chunk payloads alone (the ceiling: no
#     reader can be faster than inflating its input) and the libtrc reader
#     alone, both in memory (bench/format_bench --decode);
#   - each tool as a process, stdout to /dev/null: rate = items in the
#     trace / CPU seconds (user + system, best of 5; BENCH_QUICK=1: of 3;
#     bench/runstat), and peak RSS (wait4).
# Two traces:
#   CPU  — N samples of the codec's target workload, written as trec
#          writes (format_bench --write N runs: 4 threads at 1 kHz, 50
#          stacks of depth 20, default compression, 100 ms chunks);
#          rate in samples/s.  N = 4 M (BENCH_QUICK=1: 400 k).
#   GPU  — the synthetic training trace of tests/support/timeline_traces.c
#          (M launches: kernels, copies, memsets, syncs, 1.9 M API calls,
#          NVTX ranges, counters, a few CPU samples, one recorded loss);
#          rate in GPU activities/s.  M = 1 M (BENCH_QUICK=1: 100 k).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/..}"
BUILD=${BUILD:-build} BIN=${BIN:-bin}
. bench/lib.bash
fb=$BUILD/bench/format_bench rs=$BUILD/bench/runstat gpugen=$BUILD/tests/timeline-gen
for f in "$fb" "$rs" "$gpugen" "$BIN/trc-dump" "$BIN/trc2nvvp"; do
  [ -x "$f" ] || { echo "decode: $f not built (make bench builds it)"; exit 1; }
done
n=4000000 m=1000000 reps=5
[ "${BENCH_QUICK:-0}" = 1 ] && n=400000 m=100000 reps=3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0

"$fb" --write "$n" runs "$tmp/cpu.trc" || { echo "decode: writing the CPU trace failed"; exit 1; }
"$gpugen" --write-gpu "$m" "$tmp/gpu.trc" > /dev/null || { echo "decode: writing the GPU trace failed"; exit 1; }

# kv KEY LINE: the value of KEY=... in a line of key=value words
kv() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<< "$2"; }
# per SECS COUNT: COUNT / SECS (empty when SECS is 0 or missing)
per() { awk -v s="$1" -v c="$2" 'BEGIN { if (s > 0) printf "%.6g", c / s }'; }
# mega X: X in millions, for the log
mega() { awk -v x="$1" 'BEGIN { printf "%8.2f M", x / 1e6 }'; }

# trace GROUP FILE ITEM: floors, then one row per tool (the remaining
# arguments: "label|argv..." with the input file appended).
trace() {
  local group=$1 file=$2 item=$3
  shift 3
  local fl count bytes decoded inflate reader
  fl=$("$fb" --decode "$file") || { echo "decode: $group: format_bench --decode failed"; rc=1; return; }
  local one=sample
  if [ "$item" = samples ]; then count=$(kv samples "$fl"); else count=$(kv activities "$fl") one=activity; fi
  bytes=$(kv bytes "$fl") decoded=$(kv decoded "$fl")
  inflate=$(kv inflate_s "$fl") reader=$(kv reader_s "$fl")
  echo "$group trace: $count $item, $(kv events "$fl") events, $bytes bytes ($decoded decoded)"
  bench_result "$group" items "$count" "$item" "$(kv events "$fl") events in the trace"
  bench_result "$group" trace_bytes "$bytes" B "$(per "$count" "$bytes") bytes per ${one}"
  bench_result "$group" zlib "$(per "$inflate" "$count")" "$item/s" \
    "$(per "$inflate" "$decoded" | awk '{printf "%.0f", $1 / 1e6}') MB/s decoded"
  bench_result "$group" zlib_mbs "$(per "$inflate" "$decoded" | awk '{printf "%.6g", $1 / 1e6}')" MB/s
  bench_result "$group" reader "$(per "$reader" "$count")" "$item/s" "libtrc reader, in memory"
  printf '  %-30s %s %s/s\n' "zlib inflate alone" "$(mega "$(per "$inflate" "$count")")" "$item"
  printf '  %-30s %s %s/s\n' "reader alone" "$(mega "$(per "$reader" "$count")")" "$item"
  local spec label st cpu
  for spec in "$@"; do
    label=${spec%%|*}
    read -r -a argv <<< "${spec#*|}"
    st=$("$rs" -n "$reps" -- "$BIN/${argv[0]}" "${argv[@]:1}" "$file") ||
      { echo "decode: $group: $label failed ($st)"; rc=1; continue; }
    cpu=$(kv cpu_s "$st")
    printf '  %-30s %s %s/s  cpu %ss  peak RSS %s KiB\n' "$label" "$(mega "$(per "$cpu" "$count")")" \
      "$item" "$cpu" "$(kv maxrss_kb "$st")"
    bench_result "$group" "$label" "$(per "$cpu" "$count")" "$item/s" "cpu ${cpu} s"
    bench_result "$group" "$label.rss" "$(kv maxrss_kb "$st")" KiB
  done
}

trace decode_cpu "$tmp/cpu.trc" samples \
  "trc-dump --summary|trc-dump --summary" "trc-dump --check|trc-dump --check" \
  "trc2collapsed|trc2collapsed" "trc-stats|trc-stats" "trc2pstats|trc2pstats" \
  "trc2speedscope|trc2speedscope" "trc2chrome|trc2chrome"
trace decode_gpu "$tmp/gpu.trc" activities \
  "trc-dump --check|trc-dump --check" "trc2nvvp|trc2nvvp" \
  "trc2nvvp --print-gpu-trace|trc2nvvp --print-gpu-trace" \
  "trc2chrome|trc2chrome" "trc2speedscope|trc2speedscope" \
  "trc2collapsed --gpu|trc2collapsed --gpu"
exit $rc
