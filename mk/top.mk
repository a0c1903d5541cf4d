# trc-top's screen (lib/export/top/top_screen.c) is the one user of
# ncurses: only trc-top links it (tests/e2e/tool_libs.sh).
CURSES_LIBS := $(shell pkg-config --libs ncurses 2>/dev/null || echo -lncurses)
$(BIN)/trc-top: TOOL_LIBS = $(CURSES_LIBS)

# bench/top.sh: what a refresh costs (bench/top_bench.c over the model).
$(BUILD)/bench/top_bench: bench/top_bench.c $(TRC_TOOL_ARCHIVES)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(TRC_TOOL_ARCHIVES) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)
BENCH_DEPS += $(BUILD)/bench/top_bench
