#!/usr/bin/env bash
# tests/fuzz/run.sh — run libFuzzer harnesses one after another (`make
# fuzz`, mk/fuzz.mk) and print one summary line each.
#
#   FUZZ_BUILD=DIR FUZZ_SECONDS=N tests/fuzz/run.sh NAME...
# runs DIR/fuzz_NAME for N seconds on DIR/corpus/NAME (kept between runs;
# seeded by mk/fuzz.mk), its stderr time-stamped into DIR/logs/NAME.log.
# The summary gives the executions, the final coverage (cov: edges, ft:
# features), the corpus size, and the seconds at which the last NEW input
# and the last rise in cov were found.  Crash, leak and timeout inputs
# land in DIR/findings/NAME-*; the exit status is 1 if any harness
# stopped on one.  FUZZ_FLAGS adds libFuzzer flags.
set -u
dir=${FUZZ_BUILD:?FUZZ_BUILD not set}
secs=${FUZZ_SECONDS:-60}
mkdir -p "$dir/logs" "$dir/findings"
failed=0
for name in "$@"; do
  bin="$dir/fuzz_$name" log="$dir/logs/$name.log"
  [ -x "$bin" ] || { echo "fuzz: $bin not built (make fuzz-build)"; exit 2; }
  mkdir -p "$dir/corpus/$name"
  start=$EPOCHREALTIME
  # shellcheck disable=SC2086
  "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 -artifact_prefix="$dir/findings/$name-" ${FUZZ_FLAGS:-} \
    "$dir/corpus/$name" 2>&1 |
    while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done > "$log"
  rc=${PIPESTATUS[0]}
  summary=$(awk -v t0="$start" '
    / #[0-9]+\t/ || / #[0-9]+ / {
      for (i = 2; i <= NF; i++) {
        if ($i == "cov:") cov = $(i + 1)
        if ($i == "ft:") ft = $(i + 1)
        if ($i == "corp:") { corp = $(i + 1); sub(/\/.*/, "", corp) }
      }
      t = $1 - t0
      if ($3 == "NEW") last_new = t
      if (cov + 0 > best + 0) { best = cov; last_cov = t }
    }
    /stat::number_of_executed_units:/ { runs = $NF }
    END {
      printf "%d runs, cov %d, ft %d, corpus %d, last NEW at %.0f s, last cov rise at %.0f s",
             runs, cov, ft, corp, last_new, last_cov
    }' "$log")
  crash=$(grep -o "Test unit written to [^ ]*" "$log" | tail -1 | sed 's/Test unit written to //')
  if [ "$rc" -ne 0 ]; then
    failed=1
    echo "fuzz_$name: ${secs} s, $summary: FAILED (exit $rc)${crash:+, input: $crash}; log: $log"
    grep -m3 -E "ERROR: |runtime error|fuzz_$name: " "$log" | cut -d' ' -f2- | sed 's/^/    /'
  else
    echo "fuzz_$name: ${secs} s, $summary"
  fi
done
exit $failed
