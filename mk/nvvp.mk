# trc2nvvp: nvvp-gen writes the synthetic GPU traces
# (tests/support/nvvp_traces.c built with its main() switched on, over
# the trace builder) that the e2e scripts, the converter goldens and the
# benchmark use, so it must exist before they run.
NVVP_GEN := $(BUILD)/tests/nvvp-gen

$(NVVP_GEN): tests/support/nvvp_traces.c tests/support/nvvp_traces.h $(BUILD)/tests/support/trace_builder.o $(LIBTRC_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DNVVP_GEN_MAIN -o $@ $< $(BUILD)/tests/support/trace_builder.o $(LIBTRC_A) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

TEST_EXTRA_DEPS += $(NVVP_GEN)
BENCH_DEPS += $(NVVP_GEN)
