#!/usr/bin/env bash
# bench/gpu_launch.sh — what GPU recording costs per kernel launch:
# $BUILD/bench/gpu_launch_bench drives the CUDA injection (lib/cupti/)
# with the fake CUPTI on a thread without Python (see its header): the
# launch callback pair p50/p99 in ns over the fake's own cost, and the
# whole recording path per launch (callbacks, decode, write, compress) in
# CPU ns.  A Python thread adds the in-process stack walk (bench/py_walk.sh,
# "self").  Built only with the CUDA headers (mk/cupti.mk); without them
# this says so and its rows read n/a.  BENCH_QUICK=1: fewer launches.
# Under bench/run-all each figure also goes to $BENCH_RESULTS (group
# gpu_launch).
set -u
cd "$(dirname "$0")/.."
. bench/lib.bash
build=${BUILD:-build}
bench=$build/bench/gpu_launch_bench
n=200000; [ -n "${BENCH_QUICK:-}" ] && n=20000
if [ ! -x "$bench" ]; then
  echo "gpu_launch: $bench not built (no CUDA headers): skipped"
  exit 0
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
out=$("$bench" "$n" "$tmp") || { echo "gpu_launch: $bench failed"; exit 1; }
printf '%s\n' "$out"
val() { sed -n "s/^$1 \([0-9.]*\) .*/\1/p" <<< "$out"; }
bench_result gpu_launch callback_p50 "$(val callback_p50)" ns \
  "launch callback pair, thread without Python, over the fake's own cost; $n launches"
bench_result gpu_launch callback_p99 "$(val callback_p99)" ns "the same, p99"
bench_result gpu_launch allin "$(val allin)" ns \
  "CPU per launch, callbacks + API and kernel records decoded, written, compressed"
