# mk/speedscope_chrome_traces.mk — the synthetic traces of the
# trc2speedscope and trc2chrome tests and benchmarks.
#
# The unit test binary test_convb_export doubles as the generator of the
# synthetic traces (tests/support/convb_traces.c) that the e2e scripts
# (tests/e2e/convb_tools.sh, viewer_speedscope.sh) and
# bench/speedscope_chrome.sh, bench/speedscope_chrome_gpu.sh use:
# `test_convb_export --write-small FILE`, `--write-big N THREADS FILE`.
# `make e2e` and `make bench` do not build unit binaries, hence the deps.

CONVB_GEN := $(BUILD)/tests/test_convb_export

TEST_EXTRA_DEPS += $(CONVB_GEN)
BENCH_DEPS += $(CONVB_GEN)
