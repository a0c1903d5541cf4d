#!/usr/bin/env bash
# bench/top.sh — what a trc-top refresh costs (bench/top_bench.c): a
# 1 kHz recording of 8 threads read into trc-top's model with a refresh
# every 100 ms of trace time (10 Hz), each a table filled and its rows
# formatted; CPU time per refresh (median and worst over the refreshes
# after the 10 s window is full) for the window view and the since-start
# view, and the CPU that reading the recording costs per second of it.
# 60 s of recording (BENCH_QUICK=1: 20 s).
set -eu
cd "${TRC_ROOT:-$(dirname "$0")/..}"
. bench/lib.bash
secs=60
[ "${BENCH_QUICK:-0}" = 1 ] && secs=20
out=$("${BUILD:-build}/bench/top_bench" "$secs")
echo "trc-top refresh at 10 Hz, 8 threads at 1 kHz, $secs s: $out"
kv() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<< "$out"; }
bench_result top refresh_window_p50 "$(kv window_p50_us)" us "median CPU per refresh, 10 s window ($(kv refreshes) refreshes, $(kv rows) rows)"
bench_result top refresh_window_max "$(kv window_max_us)" us "worst refresh, 10 s window"
bench_result top refresh_all_p50 "$(kv all_p50_us)" us "median CPU per refresh, since start"
bench_result top feed_per_s "$(kv feed_us_per_s)" us "reading one second of the recording"
