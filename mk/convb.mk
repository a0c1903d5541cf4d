# mk/convb.mk — trc2speedscope and trc2chrome.
#
# The unit test binary test_speedscope_chrome doubles as the generator of the
# synthetic traces (tests/support/timeline_traces.c) that the e2e scripts
# (tests/e2e/conv_speedscope_chrome.sh, viewer_speedscope.sh) and bench/conv_b.sh
# use: `test_speedscope_chrome --write-small FILE`, `--write-big N THREADS FILE`.
# `make e2e` and `make bench` do not build unit binaries, hence the deps.

CONVB_GEN := $(BUILD)/tests/test_speedscope_chrome

TEST_EXTRA_DEPS += $(CONVB_GEN)
BENCH_DEPS += $(CONVB_GEN)
