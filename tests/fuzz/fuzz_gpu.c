/*
 * tests/fuzz/fuzz_gpu.c — libFuzzer harness for the --gpu views: the
 * pipeline's call-site stage (lib/export/common/gpu_callsite.c, default
 * window and a window of 4, with the tools' selection) feeding
 * trc2collapsed --gpu, trc-stats --gpu-callsites and pstats, plus the
 * nvprof summary of trc-stats --gpu (lib/export/nvvp/gpu_summary.c), fed by
 * the reader.  Target "gpu" of tests/support/fuzz_sinks.h.
 */
#include "tests/fuzz/fuzz_common.h"

const char fuzz_target[] = "gpu";
