/*
 * tests/fuzz/fuzz_nvvp.c — libFuzzer harness for trc2nvvp's sinks
 * (lib/export/nvvp/nvvp_*.c): the nvprof summary (text; CSV sorted by name
 * with a row limit), --print-gpu-trace and --print-api-trace (text and
 * CSV), and the SVG timeline (whole, then 400 px wide with a --from/--to
 * window), fed by the reader.  Target "nvvp" of tests/support/fuzz_sinks.h.
 */
#include "tests/fuzz/fuzz_common.h"

const char fuzz_target[] = "nvvp";
