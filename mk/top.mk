# trc-top's screen (lib/export/top/top_screen.c) is the one user of
# ncurses: only trc-top links it (tests/e2e/tool_libs.sh).
CURSES_LIBS := $(shell pkg-config --libs ncurses 2>/dev/null || echo -lncurses)
$(BIN)/trc-top: TOOL_LIBS = $(CURSES_LIBS)
