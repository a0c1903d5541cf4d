# bench/lib.bash — sourced by the bench/*.sh scripts (not a benchmark
# itself: bench/run-all runs *.sh only).
#
# bench_result GROUP NAME VALUE UNIT [NOTE]
#   appends one tab-separated result line to $BENCH_RESULTS, the file
#   bench/run-all collects and bench/report.py turns into the table; a
#   no-op when a script runs on its own (BENCH_RESULTS unset).  VALUE is
#   a plain number in UNIT (s, us, pct, KiB, samples/s, ...); an empty
#   or non-numeric VALUE is skipped, so a figure that could not be
#   measured shows as "n/a" in the table instead of a wrong number.
bench_result() {
  [ -n "${BENCH_RESULTS:-}" ] || return 0
  case $3 in '' | *[!0-9.eE+-]*) return 0 ;; esac
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-}" >> "$BENCH_RESULTS"
}
