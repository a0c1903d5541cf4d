#!/usr/bin/env bash
# Codec size and speed: bytes/sample, writer/reader throughput, the zlib
# inflate ceiling and reader memory at N/10 vs N samples, side by side.
# BENCH_QUICK=1 uses 200k samples instead of 1M.  Under bench/run-all
# each figure also goes to $BENCH_RESULTS (group format).
set -eu
cd "$(dirname "$0")/.."
. bench/lib.bash
n=1000000
[ "${BENCH_QUICK:-}" = 1 ] && n=200000
out=$("${BUILD:-build}/bench/format_bench" "$n")
printf '%s\n' "$out"
# Table rows: workload mode bytes/sample samples/event writer reader
# reader-ev reader-MB/s inflate-MB/s at-ceiling%
while read -r wl mode bps _ wr rd _ _ infl ceil; do
  case $wl in runs | random) ;; *) continue ;; esac
  k=${wl}_$mode note="synthetic, $n samples, $wl stacks, $mode writer"
  bench_result format "${k}_bytes" "$bps" B/sample "$note"
  bench_result format "${k}_writer" "$(awk -v x="$wr" 'BEGIN{print x * 1e6}')" samples/s "$note"
  bench_result format "${k}_reader" "$(awk -v x="$rd" 'BEGIN{print x * 1e6}')" samples/s "$note"
  bench_result format "${k}_inflate_mbs" "$infl" MB/s "$note"
  bench_result format "${k}_reader_at_ceiling" "${ceil%\%}" pct "reader speed as % of inflate speed, $note"
done <<< "$out"
# "reader peak RSS (runs, recording): A KiB at N1 samples, B KiB at N2, C KiB at N3 ..."
sed -n 's/^reader peak RSS (\([a-z]*\), recording): \([0-9]*\) KiB at \([0-9]*\) samples, \([0-9]*\) KiB at \([0-9]*\), \([0-9]*\) KiB at \([0-9]*\).*/\1 \2 \3 \4 \5 \6 \7/p' <<< "$out" |
  while read -r wl a na b nb c nc; do
    bench_result format "${wl}_reader_rss_n_10" "$a" KiB "reader peak RSS, $na samples"
    bench_result format "${wl}_reader_rss_n" "$b" KiB "reader peak RSS, $nb samples"
    bench_result format "${wl}_reader_rss_3n" "$c" KiB "reader peak RSS, $nc samples"
  done
