# trec: helper programs the recorder's end-to-end tests and
# benchmark use.  They read traces through the public API only.
TREC_TEST_TOOLS := $(BUILD)/tests/tools/trc_stacks $(BUILD)/tests/tools/trc_shares \
                   $(BUILD)/tests/tools/no_perf_events

$(BUILD)/tests/tools/%: tests/e2e/tools/%.c $(LIBTRC_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBTRC_A) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

TEST_EXTRA_DEPS += $(TREC_TEST_TOOLS)
BENCH_DEPS += $(TREC_TEST_TOOLS)

# bench/trec.sh's baseline: CPU per empty 1 kHz wake-up on this machine.
$(BUILD)/bench/trec_ticks: bench/trec_ticks.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $<

BENCH_DEPS += $(BUILD)/bench/trec_ticks
