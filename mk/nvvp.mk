# trc2nvvp: the e2e scripts and the benchmark generate their
# GPU traces with the synthetic generator in tests/unit/support/test_nvvp_traces.c
# (--write mode), so it must exist before they run.
TEST_EXTRA_DEPS += $(BUILD)/tests/test_nvvp_traces
BENCH_DEPS += $(BUILD)/tests/test_nvvp_traces
