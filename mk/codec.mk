# mk/codec.mk — rules owned by the codec: the format benchmark program.
# bench/format.sh runs $(BUILD)/bench/format_bench.

FORMAT_BENCH := $(BUILD)/bench/format_bench
BENCH_DEPS += $(FORMAT_BENCH)

$(FORMAT_BENCH): bench/format_bench.c $(LIBTRC_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBTRC_A) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)
