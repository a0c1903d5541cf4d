#!/usr/bin/env bash
# trc2nvvp on 1 M GPU activities (plus 1 M API calls, samples, counters;
# tests/support/nvvp_traces.c): each output — summary, GPU trace (text and
# CSV), API trace, SVG — pinned to one core, against the time to only read
# the trace (trc-dump --summary if present, else the summary itself, which
# keeps nothing per record).  Budget: 2 s per output.  Also prints the SVG
# size.  BENCH_QUICK=1: 100 k activities.  BENCH_STRICT=1: exit 1 when an
# output is over budget (off by default: a loaded machine is no verdict).
# Under bench/run-all each figure also goes to $BENCH_RESULTS (group nvvp).
set -u
cd "${TRC_ROOT:-$(dirname "$0")/..}"
. bench/lib.bash
BUILD=${BUILD:-build} BIN=${BIN:-bin}
gen=$BUILD/tests/nvvp-gen tool=$BIN/trc2nvvp
for f in "$gen" "$tool"; do [ -x "$f" ] || { echo "bench nvvp: $f not built"; exit 1; }; done
n=1000000
[ -n "${BENCH_QUICK:-}" ] && n=100000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pin=()
command -v taskset > /dev/null && pin=(taskset -c 0)

"$gen" --write big "$n" "$tmp/big.trc" > /dev/null || { echo "bench nvvp: generator failed"; exit 1; }
echo "trace: $n GPU activities + $n API calls, $(($(wc -c < "$tmp/big.trc") / 1024)) KiB"

# secs CMD...: CPU seconds (user + sys) of the command, output to a file
secs() {
  python3 - "$@" <<'EOF'
import os, subprocess, sys
with open(os.environ["BENCH_OUT"], "wb") as out:
    subprocess.run(sys.argv[1:], stdout=out, stderr=subprocess.DEVNULL)
t = os.times()
print("%.3f" % (t.children_user + t.children_system))
EOF
}
export BENCH_OUT=$tmp/out
base_cmd=("$tool" "$tmp/big.trc")
base_name="read only (summary)"
if [ -x "$BIN/trc-dump" ] && "$BIN/trc-dump" --summary "$tmp/big.trc" > /dev/null 2>&1; then
  base_cmd=("$BIN/trc-dump" --summary "$tmp/big.trc")
  base_name="read only (trc-dump --summary)"
fi
base=$(secs "${pin[@]}" "${base_cmd[@]}")
printf '%-28s %7ss\n' "$base_name" "$base"
bench_result nvvp "read only" "$base" s "$base_name, $n activities + $n API calls, CPU time"
over=0
row() {
  local name=$1
  shift
  local s
  s=$(secs "${pin[@]}" "$@")
  local ratio flag=""
  ratio=$(python3 -c "print('%.2f' % ($s / max($base, 0.001)))")
  python3 -c "import sys; sys.exit(0 if $s <= 2.0 else 1)" || { flag="  OVER 2 s BUDGET"; over=1; }
  printf '%-28s %7ss  %5sx read%s\n' "$name" "$s" "$ratio" "$flag"
  bench_result nvvp "$name" "$s" s "${ratio}x the read-only time; budget 2 s at 1 M activities"
}
row "summary" "$tool" "$tmp/big.trc"
row "summary --csv" "$tool" --csv "$tmp/big.trc"
row "--print-gpu-trace" "$tool" --print-gpu-trace "$tmp/big.trc"
row "--print-gpu-trace --csv" "$tool" --print-gpu-trace --csv "$tmp/big.trc"
row "--print-api-trace" "$tool" --print-api-trace "$tmp/big.trc"
row "--svg" "$tool" --svg "$tmp/out.svg" "$tmp/big.trc"
echo "SVG size: $(wc -c < "$tmp/out.svg") bytes for $n activities"
bench_result nvvp svg_bytes "$(wc -c < "$tmp/out.svg")" B "for $n activities"
[ -n "${BENCH_STRICT:-}" ] && [ $over = 1 ] && exit 1
exit 0
