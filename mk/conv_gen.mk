# mk/conv_gen.mk — conv-gen, the synthetic trace generator of the
# trc2collapsed, trc-stats and trc2pstats tests.
#
# conv-gen writes the synthetic traces the e2e tests (tests/e2e/conv_*.sh)
# and bench/collapsed_stats_pstats.sh and bench/flamegraph.sh use: tests/support/folded_traces.c
# built with its main() switched on, linked with the trace builder it is
# written with.

CONV_GEN := $(BUILD)/tests/conv-gen

$(CONV_GEN): tests/support/folded_traces.c tests/support/folded_traces.h $(BUILD)/tests/support/trace_builder.o $(LIBTRC_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -DCONV_GEN_MAIN -o $@ $< $(BUILD)/tests/support/trace_builder.o $(LIBTRC_A) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

TEST_EXTRA_DEPS += $(CONV_GEN)
BENCH_DEPS += $(CONV_GEN)
