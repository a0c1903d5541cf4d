# mk/speedscope_chrome_traces.mk — the synthetic traces of the
# trc2speedscope and trc2chrome tests and benchmarks.
#
# timeline-gen writes the synthetic traces (tests/support/timeline_traces.c
# built with its main() switched on, over the trace builder) that the e2e
# scripts (tests/e2e/conv_speedscope_chrome*.sh, viewer_speedscope.sh),
# the converter goldens (fixtures/convert/) and bench/speedscope_chrome.sh and bench/speedscope_chrome_gpu.sh use:
# `timeline-gen --write-small FILE`, `--write-big N THREADS FILE`,
# `--write-gpu N FILE`.

CONVB_GEN := $(BUILD)/tests/timeline-gen

$(CONVB_GEN): tests/support/timeline_traces.c tests/support/timeline_traces.h $(BUILD)/tests/support/trace_builder.o $(LIBTRC_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DTIMELINE_GEN_MAIN -o $@ $< $(BUILD)/tests/support/trace_builder.o $(LIBTRC_A) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

TEST_EXTRA_DEPS += $(CONVB_GEN)
BENCH_DEPS += $(CONVB_GEN)
