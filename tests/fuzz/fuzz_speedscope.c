/*
 * tests/fuzz/fuzz_speedscope.c — libFuzzer harness for trc2speedscope's
 * sink (lib/export/speedscope/speedscope.c, speedscope_gpu.c, cpuview.c, json_out.c):
 * sampled profiles per thread and process and evented GPU profiles, with
 * default options and with --merge-threads --lines and a 2-run spool
 * (spills to a temp file), fed by the reader.  Target "speedscope" of
 * tests/support/fuzz_sinks.h.
 */
#include "tests/fuzz/fuzz_common.h"

const char fuzz_target[] = "speedscope";
