# GPU idle views: idle-gen writes the synthetic trace of
# tests/support/idle_traces.c (its main() switched on, over the trace
# builder) that the e2e script and the benchmark read, so it must exist
# before they run.
IDLE_GEN := $(BUILD)/tests/idle-gen

$(IDLE_GEN): tests/support/idle_traces.c tests/support/idle_traces.h $(BUILD)/tests/support/trace_builder.o $(LIBTRC_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DIDLE_GEN_MAIN -o $@ $< $(BUILD)/tests/support/trace_builder.o $(LIBTRC_A) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

TEST_EXTRA_DEPS += $(IDLE_GEN)
BENCH_DEPS += $(IDLE_GEN)
