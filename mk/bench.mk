# mk/bench.mk — the benchmark report.
#
#   make bench               run every bench/*.sh; results in
#                            $(BUILD)/bench/results.tsv, the table in
#                            $(BUILD)/bench/report.txt (and on stdout)
#   make bench BENCH_SAVE=1  the same, then copy both into docs/
#                            (docs/bench-results.tsv, docs/BENCHMARKS.md)
#   make bench-report        print the table again from the last results
#                            (BENCH_SAVE=1: and copy them into docs/)
#   BENCH_QUICK=1            smaller sizes: a smoke run (never saved)
#   BENCH_ONLY="trec decode" only these bench scripts
#
# $(BUILD)/bench/runstat runs a command and reports its CPU time and peak
# RSS from wait4 (bench/runstat.c).

BENCH_DEPS += $(BUILD)/bench/runstat

$(BUILD)/bench/runstat: bench/runstat.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $<

.PHONY: bench-report
bench-report:
	@BUILD=$(BUILD) BIN=$(BIN) ./bench/run-all --report-only
